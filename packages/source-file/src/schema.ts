import {
  csvValueType,
  evolveSchema,
  type Field,
  type FieldType,
  FieldTypes,
  findKeys,
  jsonValueType,
  KeyRanges,
  type NamespaceSchema,
  widenFieldType,
} from '@skippr/connector-api'
import type { Block } from './block.js'
import { LF } from './bytes.js'
import { type CsvField, parseCsv } from './csv.js'
import { numberFits } from './csv-values.js'
import { HeaderInvalidError, HeaderMismatchError } from './errors.js'
import { KeyWatch, type Misfit } from './keys.js'
import type { FileReader } from './reader.js'
import type { Refusals } from './refused.js'
import { type CsvWatch, csvWatch, FRACTION, firstRecordEnd, NANOS, NUMBER, TIME } from './scan.js'

/** Bytes of records a sample holds, per file. */
export const SAMPLE_BYTES = 256 * 1024
/** Records discovery samples across files before it stops opening more of them. */
export const DISCOVERY_ROWS = 20_000
/** Bytes of records sampled for the types of keys found after a file's sample, from the first record with them. */
const NEW_KEY_SAMPLE_BYTES = 64 * 1024

/**
 * The namespace's schema as files are read: a configured one stays as it is; an inferred one
 * takes its columns from the first file, its types from the first sample of records, and widens
 * with the sample of each file read after that. With JSON lines, every record's keys are also
 * checked, so a key first seen after the sample still becomes a column. A record the schema cannot
 * take (a line that is not JSON, a value its configured column would change) is refused in its
 * block (`Block.refused`); records refused already are not looked at.
 */
export class SchemaTracker {
  schema: NamespaceSchema
  /** Whether the types come from records (or config) rather than being placeholders. */
  private typed: boolean
  /** JSON lines: the keys seen in every record read so far (see newKeys). */
  private keys: KeyWatch | undefined
  /** The whole records of the last sample observed: the same records again cannot change the schema. */
  private lastSample: Uint8Array | undefined
  /** The schema the last chunk of this read carried (see `unsent`). */
  private sent: NamespaceSchema | undefined

  constructor(
    readonly namespace: string,
    private readonly format: 'csv' | 'jsonl' | 'parquet',
    private readonly configured: readonly Field[] | undefined,
  ) {
    this.schema = { namespace, fields: configured ?? [] }
    this.typed = configured !== undefined
  }

  /** A copy for one read, so that its findings do not leak into the next read; it has sent no schema yet. */
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
    reader.watch = watchOf(this.schema.fields, this.configured !== undefined)
    return true
  }

  /**
   * Widens the schema with the types of a sample of the block's records; a sampled JSON line that
   * is not a JSON object is refused. A configured schema stays as it is.
   */
  observe(block: Block): void {
    if (this.configured) return
    // A sample's records are the whole ones in it: what follows its last newline is never parsed.
    const head = block.records.subarray(0, SAMPLE_BYTES)
    // A JSON record longer than the sample is sampled whole: a line holds one record.
    const records =
      this.format === 'jsonl'
        ? block.records.subarray(0, wholeLines(block.records, 0, SAMPLE_BYTES))
        : head.subarray(0, head.lastIndexOf(LF) + 1)
    // Reading a file from its start samples what discovery sampled (10–15 ms of a sync's start).
    if (this.lastSample && Buffer.compare(records, this.lastSample) === 0) return
    // Seeded with the types so far, so that a sample that follows (a file's settled last record)
    // widens them as one sample would: a JSON key nested in one and `true` in the other is json.
    const types = new FieldTypes()
    for (const field of this.schema.fields) types.add(field.name, this.typed ? field.type : undefined)
    const refusedBefore = block.refused.size
    if (this.format === 'csv') this.sampleCsv(new TextDecoder().decode(block.refused.without(records)), types)
    else sampleJsonl(block.records, 0, records.length, types, block.refused)
    // A copy: a view would keep the whole block's buffer. A sample that refused a record is not
    // kept: the read after discovery must sample it again, to refuse that record in its chunk.
    this.lastSample = block.refused.size === refusedBefore ? Buffer.from(records) : undefined
    if (!this.typed) {
      const fields = types.fields()
      if (fields.length === 0) return
      this.typed = true
      this.schema = { namespace: this.namespace, fields }
      return
    }
    // Fields seen only as null in this sample say nothing about their type.
    this.schema = evolveSchema(this.schema, { namespace: this.namespace, fields: types.fields(true) })
  }

  /**
   * Parquet: the fields a file declares (its columns and their types). The first file's are the
   * schema; a later file's add columns and widen types.
   */
  include(fields: readonly Field[]): void {
    if (!this.typed) {
      this.typed = true
      this.schema = { namespace: this.namespace, fields }
      return
    }
    this.schema = evolveSchema(this.schema, { namespace: this.namespace, fields })
  }

  /**
   * The schema the next chunk of this read carries: the current one, unless the chunk before
   * carried it already. So the first chunk of a read carries it always, and each later one that
   * changed it. The first one must: the runner's saved schema can be older than this run's
   * discovery (a file added since the last run, sampled by this discovery, can hold a new key or a
   * wider type), and the runner saves a new version only when a chunk's schema adds to it.
   */
  unsent(): NamespaceSchema | undefined {
    if (this.sent === this.schema) return undefined
    this.sent = this.schema
    return this.schema
  }

  /**
   * JSON lines: adds the keys that the block's records carry and the schema lacks, and widens the
   * columns whose values do not all fit their type. A sink would drop a new key, and alter a value
   * that does not fit (`1.5` in an integer column): a file's sample (its first block) can miss both.
   * A new key's type comes from a sample of records from the first one with it on; a value that
   * does not fit is judged alone; with a configured schema, its record is refused.
   */
  newKeys(block: Block): void {
    if (this.format !== 'jsonl') return
    this.keys ??= new KeyWatch(this.configured === undefined)
    this.keys.follow(this.schema.fields)
    if (this.configured) {
      // A configured schema is not widened, and a sink drops the keys it lacks.
      const { records, refused } = block
      for (const misfit of this.keys.scan(records, refused.ranges()).misfits)
        refused.add(misfit.at, lineEnd(records, misfit.at), misfitProblem(misfit), true)
      return
    }
    const before = this.keys.copy()
    const refusedBefore = block.refused.size
    const evolved = this.withNewKeys(block, this.keys)
    if (block.refused.size > refusedBefore) {
      // A sample refused a line: the keys learned from it are forgotten, and the block read again without it.
      this.keys = before
      this.newKeys(block)
      return
    }
    this.schema = evolved
  }

  /** The schema with the keys and wider types of the block's records (`newKeys`); refuses the sampled lines that are not JSON. */
  private withNewKeys(block: Block, keys: KeyWatch): NamespaceSchema {
    // The records as in the file (blank lines kept), so that a refused one's place is exact.
    const { records, refused } = block
    const found = keys.scan(records, refused.ranges())
    if (found.recordsWithNewKeys.length === 0 && found.widened.length === 0) return this.schema
    const types = new FieldTypes()
    let sampledTo = 0
    for (const start of found.recordsWithNewKeys) {
      if (start < sampledTo) continue
      sampledTo = wholeLines(records, start, NEW_KEY_SAMPLE_BYTES)
      sampleJsonl(records, start, sampledTo, types, refused)
    }
    const names = new Set(this.columnNames())
    // A new key seen only as null is a string, as in discovery; a known one keeps its type then.
    const added = types.fields().filter((f) => !names.has(f.name))
    const widened = types.fields(true).filter((f) => names.has(f.name))
    let evolved = evolveSchema(this.schema, {
      namespace: this.namespace,
      fields: [...widened, ...found.widened, ...added],
    })
    if (added.length > 0) {
      // The new keys' values after their sample are checked once their types are known.
      keys.follow(evolved.fields)
      const late = keys.scan(records, refused.ranges()).widened
      evolved = evolveSchema(evolved, { namespace: this.namespace, fields: late })
    }
    return evolved
  }

  /**
   * CSV: judges each value the scan found may not fit its column's type (`Block.misfits`: a
   * fraction in an integer column, a time in a date column, which a sink would round or cut) and
   * widens the column to hold it. A configured schema is not widened: such a value's record is
   * refused, and so is one with a value its numeric column does not hold (`abc`, csv-values.ts).
   */
  widenMisfits(reader: FileReader, block: Block): void {
    if (this.format !== 'csv') return
    const misfits = block.misfits ?? []
    const types = new FieldTypes()
    for (let k = 0; k < misfits.length; k += 2) {
      const start = misfits[k] as number
      if (block.refused.has(start)) continue
      const field = this.schema.fields[misfits[k + 1] as number] as Field
      const end = start + firstRecordEnd(block.records.subarray(start))
      const record = block.records.subarray(start, end)
      const value = parseCsv(new TextDecoder().decode(record), 1)[0]?.fields[misfits[k + 1] as number] ?? null
      const type = csvValueType(value)
      const wider = type === undefined ? field.type : widenFieldType(field.type, type)
      if (this.configured) {
        const problem = configuredMisfit(field, value, type, wider)
        if (problem) block.refused.add(start, end, problem, true)
      }
      types.add(field.name, type)
    }
    const evolved = this.configured
      ? this.schema
      : evolveSchema(this.schema, { namespace: this.namespace, fields: types.fields(true) })
    reader.watch = watchOf(evolved.fields, this.configured !== undefined)
    this.schema = evolved
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

/**
 * Each schema's watch, made once, for an inferred and a configured schema: a schema's fields never
 * change, an evolved one is a new array.
 */
const watches = [new WeakMap<readonly Field[], CsvWatch>(), new WeakMap<readonly Field[], CsvWatch>()]

/**
 * What the CSV scan watches each column's values for: fractions in integers, times in dates,
 * nanoseconds in timestamps; `configured`, text in numeric columns too (csv-values.ts).
 */
function watchOf(fields: readonly Field[], configured: boolean): CsvWatch {
  const cache = watches[configured ? 1 : 0] as WeakMap<readonly Field[], CsvWatch>
  let watch = cache.get(fields)
  if (watch === undefined) {
    const number = configured ? NUMBER : 0
    const flags = Uint8Array.from(fields, ({ type }) =>
      type === 'int' || type === 'long'
        ? FRACTION | number
        : type === 'double'
          ? number
          : type === 'date'
            ? TIME
            : type === 'timestamp'
              ? NANOS
              : 0,
    )
    watch = csvWatch(flags)
    cache.set(fields, watch)
  }
  return watch
}

/**
 * Why a configured column refuses a CSV value the scan listed (`type` its inferred type, `wider`
 * the type that holds both): a number it would change (`1.5` in an int), or a value that is no
 * number of its type (`abc`, `1e400` in a double). Undefined when the value fits.
 */
function configuredMisfit(
  column: Field,
  value: CsvField,
  type: FieldType | undefined,
  wider: FieldType,
): string | undefined {
  const changed =
    wider === column.type ? undefined : misfitProblem({ at: 0, column, value: JSON.stringify(value), wider })
  if (!(column.type === 'int' || column.type === 'long' || column.type === 'double')) return changed
  if (numberFits(value, column.type)) return undefined
  // A number that a wider number holds: the sink would change it (DuckDB rounds `1.5` into an int).
  if ((type === 'int' || type === 'long' || type === 'double') && changed) return changed
  const holder = wider === column.type ? 'string' : wider
  return `${JSON.stringify(value)} in column ${column.name} is not ${typeName(column.type)} (${typeName(holder)} column holds it)`
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

/**
 * Where the whole records of `records` from `from` within `bytes` of it end, at least one: a record
 * longer than the sample is sampled whole (a JSON line holds one record; a block holds whole ones).
 */
function wholeLines(records: Uint8Array, from: number, bytes: number): number {
  if (from + bytes >= records.length) return records.length
  const last = records.lastIndexOf(LF, from + bytes - 1)
  if (last >= from) return last + 1
  const first = records.indexOf(LF, from)
  return first === -1 ? records.length : first + 1
}

/** Where the line that starts at `start` ends, past its newline. */
function lineEnd(records: Uint8Array, start: number): number {
  const newline = records.indexOf(LF, start)
  return newline === -1 ? records.length : newline + 1
}

/**
 * Widens `types` with each top-level value of the lines of `records[from, to)`, judged by its
 * source text. A line that is not a JSON object is refused; refused lines are passed over.
 */
function sampleJsonl(
  records: Uint8Array,
  from: number,
  to: number,
  types: FieldTypes,
  refused: Refusals,
): void {
  const decoder = new TextDecoder()
  const members = new KeyRanges()
  for (let start = from; start < to; ) {
    const newline = records.indexOf(LF, start)
    const end = newline === -1 || newline >= to ? to : newline
    const line = refused.has(start) ? '' : decoder.decode(records.subarray(start, end))
    if (line.trim() !== '') {
      const problem = notAnObject(line)
      if (problem) {
        refused.add(start, Math.min(end + 1, records.length), problem, true)
      } else {
        findKeys(records, start, end, members)
        members.decode(records).forEach((key, k) => {
          types.add(key, jsonValueType(members.value(records, k)))
        })
      }
    }
    start = end + 1
  }
}

/** Why a line is not a JSON object; undefined when it is one. */
function notAnObject(line: string): string | undefined {
  let record: unknown
  try {
    record = JSON.parse(line)
  } catch (error) {
    return `the line is not valid JSON (${(error as Error).message})`
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return 'the line is not a JSON object'
  return undefined
}

/** A JSON value a configured column's type would change. */
function misfitProblem({ value, column, wider }: Misfit): string {
  return `${value} in column ${column.name} is not ${typeName(column.type)}, and loading it would change it (${typeName(wider)} column holds it)`
}

/** A field type with its article: `an int`, `a double`. */
function typeName(type: FieldType): string {
  return `${type === 'int' ? 'an' : 'a'} ${type}`
}
