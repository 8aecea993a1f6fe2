import { evolveSchema, type Field, type NamespaceSchema } from '@skippr/connector-api'
import { LF } from './bytes.js'
import { type CsvField, parseCsv } from './csv.js'
import { BadRecordError, HeaderInvalidError, HeaderMismatchError } from './errors.js'
import { csvValueType, FieldTypes, jsonValueType, SAMPLE_BYTES } from './infer.js'
import { KeyWatch } from './keys.js'
import type { Block, FileReader } from './reader.js'

/** Bytes of records sampled for the types of keys found after a file's sample, from the first record with them. */
const NEW_KEY_SAMPLE_BYTES = 64 * 1024

/**
 * The namespace's schema as files are read: a configured one stays as it is; an inferred one
 * takes its columns from the first file, its types from the first sample of records, and widens
 * with the sample of each file read after that. With JSON lines, every record's keys are also
 * checked, so a key first seen after the sample still becomes a column.
 */
export class SchemaTracker {
  schema: NamespaceSchema
  /** Whether the types come from records (or config) rather than being placeholders. */
  private typed: boolean
  /** JSON lines: the keys seen in every record read so far (see newKeys). */
  private keys: KeyWatch | undefined
  /** The whole records of the last sample observed: the same records again cannot change the schema. */
  private lastSample: Uint8Array | undefined

  constructor(
    readonly namespace: string,
    private readonly format: 'csv' | 'jsonl' | 'parquet',
    private readonly configured: readonly Field[] | undefined,
  ) {
    this.schema = { namespace, fields: configured ?? [] }
    this.typed = configured !== undefined
  }

  /** An independent copy, so that one read's findings do not leak into the next read. */
  copy(): SchemaTracker {
    const copy = new SchemaTracker(this.namespace, this.format, this.configured)
    copy.schema = this.schema
    copy.typed = this.typed
    copy.lastSample = this.lastSample
    return copy
  }

  /**
   * Sets `reader.columns` for a CSV file from its header row (or, without one, the schema or its
   * first record). A header must name the schema's columns in order, so that the file's bytes
   * pass on untouched. False while the file has no complete first record yet.
   */
  async prepare(reader: FileReader, header: boolean): Promise<boolean> {
    if (this.format !== 'csv') return true
    const names = this.columnNames()
    if (header) {
      const found = await reader.record('header')
      if (!found) return false
      const columns = checkHeader(reader.file.key, found)
      if (names.length === 0) this.schema = { namespace: this.namespace, fields: columns.map(untyped) }
      else if (columns.join('\u0000') !== names.join('\u0000'))
        throw new HeaderMismatchError(reader.file.key, columns, names)
    } else if (names.length === 0) {
      const first = await reader.record('next')
      if (!first) return false
      const generated = first.map((_, i) => `column${i + 1}`)
      this.schema = { namespace: this.namespace, fields: generated.map(untyped) }
    }
    reader.columns = this.schema.fields.length
    return true
  }

  /**
   * Widens the schema with the types of a sample of the block's records. Returns the new schema
   * when it changed, undefined otherwise (and always with a configured schema).
   */
  async observe(reader: FileReader, block: Block): Promise<NamespaceSchema | undefined> {
    if (this.configured) return undefined
    // A sample's records are the whole ones in it: what follows its last newline is never parsed.
    const head = block.records.subarray(0, SAMPLE_BYTES)
    const records = head.subarray(0, head.lastIndexOf(LF) + 1)
    // Reading a file from its start samples what discovery sampled (10–15 ms of a sync's start).
    if (this.lastSample && Buffer.compare(records, this.lastSample) === 0) return undefined
    const types = new FieldTypes()
    for (const field of this.schema.fields) types.add(field.name, undefined)
    const sample = new TextDecoder().decode(records)
    if (this.format === 'csv') this.sampleCsv(sample, types)
    else await sampleJsonl(sample, types, (at, problem) => bad(reader, block, sample, at, problem))
    // A copy: a view would keep the whole block's buffer.
    this.lastSample = Buffer.from(records)
    if (!this.typed) {
      const fields = types.fields()
      if (fields.length === 0) return undefined
      this.typed = true
      this.schema = { namespace: this.namespace, fields }
      return this.schema
    }
    // Fields seen only as null in this sample say nothing about their type.
    const evolved = evolveSchema(this.schema, { namespace: this.namespace, fields: types.fields(true) })
    if (evolved === this.schema) return undefined
    this.schema = evolved
    return evolved
  }

  /**
   * Parquet: the fields a file declares (its columns and their types). The first file's are the
   * schema; a later file's add columns and widen types. Returns the new schema when it changed.
   */
  include(fields: readonly Field[]): NamespaceSchema | undefined {
    if (!this.typed) {
      this.typed = true
      this.schema = { namespace: this.namespace, fields }
      return this.schema
    }
    const evolved = evolveSchema(this.schema, { namespace: this.namespace, fields })
    if (evolved === this.schema) return undefined
    this.schema = evolved
    return evolved
  }

  /**
   * JSON lines: adds the keys that the block's records carry and the schema lacks. A sink would drop
   * them, and a file's sample (its first block) can miss a key that appears later. Types come from a
   * sample of records from the first one with the new key on. Returns the new schema when it changed.
   */
  async newKeys(reader: FileReader, block: Block): Promise<NamespaceSchema | undefined> {
    if (this.configured || this.format !== 'jsonl') return undefined
    this.keys ??= new KeyWatch(this.columnNames())
    // The records as in the file (blank lines kept), so that a bad one's place is exact.
    const records = block.records
    const starts = this.keys.recordsWithNewKeys(records)
    if (starts.length === 0) return undefined
    const types = new FieldTypes()
    let sampledTo = 0
    for (const start of starts) {
      if (start < sampledTo) continue
      sampledTo = Math.min(records.length, start + NEW_KEY_SAMPLE_BYTES)
      const sample = new TextDecoder().decode(records.subarray(start, sampledTo))
      await sampleJsonl(sample, types, (at, problem) => bad(reader, block, sample, at, problem, start))
    }
    const names = new Set(this.columnNames())
    // A new key seen only as null is a string, as in discovery; a known one keeps its type then.
    const added = types.fields().filter((f) => !names.has(f.name))
    const widened = types.fields(true).filter((f) => names.has(f.name))
    const evolved = evolveSchema(this.schema, { namespace: this.namespace, fields: [...widened, ...added] })
    if (evolved === this.schema) return undefined
    this.schema = evolved
    return evolved
  }

  private columnNames(): string[] {
    return this.schema.fields.map((f) => f.name)
  }

  private sampleCsv(sample: string, types: FieldTypes): void {
    const names = this.columnNames()
    for (const record of parseCsv(sample, Number.POSITIVE_INFINITY)) {
      record.fields.forEach((value, i) => {
        types.add(names[i] as string, csvValueType(value))
      })
    }
  }
}

function untyped(name: string): Field {
  return { name, type: 'string' }
}

function checkHeader(file: string, header: CsvField[]): string[] {
  const names = header.map((name) => name?.trim() ?? '')
  if (names.length === 0 || names.some((name) => name === ''))
    throw new HeaderInvalidError(file, 'has an empty column name')
  const repeated = names.find((name, i) => names.indexOf(name) !== i)
  if (repeated !== undefined) throw new HeaderInvalidError(file, `names the column ${repeated} twice`)
  return names
}

type Problem = (charIndex: number, problem: string) => Promise<never>

async function sampleJsonl(sample: string, types: FieldTypes, problem: Problem): Promise<void> {
  // The sample may end inside a line: only lines with their newline are whole.
  const whole = sample.slice(0, sample.lastIndexOf('\n') + 1)
  let start = 0
  for (let newline = whole.indexOf('\n'); newline !== -1; newline = whole.indexOf('\n', start)) {
    const line = whole.slice(start, newline)
    if (line.trim() !== '') {
      let record: unknown
      try {
        record = JSON.parse(line)
      } catch (error) {
        await problem(start, `the line is not valid JSON (${(error as Error).message})`)
      }
      if (typeof record !== 'object' || record === null || Array.isArray(record)) {
        await problem(start, 'the line is not a JSON object')
      }
      for (const [key, value] of Object.entries(record as object)) types.add(key, jsonValueType(value))
    }
    start = newline + 1
  }
}

/** Throws the bad record error for the record at `at` of `sample`, which starts `sampleAt` bytes into the block. */
async function bad(
  reader: FileReader,
  block: Block,
  sample: string,
  at: number,
  problem: string,
  sampleAt = 0,
): Promise<never> {
  const byte = block.start + sampleAt + Buffer.byteLength(sample.slice(0, at))
  throw new BadRecordError(await reader.place(byte), problem)
}
