/**
 * A pushed payload as the rows of one chunk: validated whole (one bad record refuses the payload,
 * with its line and reason), typed as source-file types a file's sample (connector-api's
 * `jsonValueType`, `csvValueType`), and kept as the sender's bytes where the format allows, so a
 * value lands as written.
 */
import {
  csvField,
  csvValueType,
  type Field,
  FieldTypes,
  findKeys,
  jsonValueType,
  KeyRanges,
  parseCsv,
  type RecordFormat,
  transcode,
} from '@skippr/connector-api'
import { PushDecodeError } from './errors.js'
import { BYTES_COLUMN, type PushFormat } from './format.js'
import { jsonArrayElements } from './json-array.js'

/** The records of one payload. */
export interface DecodedPayload {
  readonly format: RecordFormat
  readonly rows: number
  /** Every field the records hold, first-seen order, the narrowest type holding each value. */
  readonly fields: readonly Field[]
  /** The chunk body, JSON lines: CSV payloads too, so that rows land by column name (see decodeCsv). */
  readonly body: Uint8Array
  /** Bytes the payload arrived as: what backpressure counts. */
  readonly bytes: number
}

const LF = 10
const CR = 13
const SPACE = 32
const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

/** Decodes `payload` in `format`; throws `PushDecodeError` naming the first record that does not decode. */
export function decodePayload(payload: Uint8Array, format: PushFormat): DecodedPayload {
  switch (format) {
    case 'jsonl':
      return decodeJsonl(payload)
    case 'json':
      return decodeJson(payload)
    case 'csv':
      return decodeCsv(payload)
    case 'bytes':
      return decodeBytes(payload)
  }
}

function text(payload: Uint8Array): string {
  try {
    return decoder.decode(payload)
  } catch {
    throw new PushDecodeError(1, 'the payload is not UTF-8 text', 'record')
  }
}

/** Collects JSON-object records as JSON lines, each checked by JSON.parse and typed by its values' text. */
class JsonRecords {
  /** Views of the payload's records, copied into the body by `decoded`. */
  private readonly records: Uint8Array[] = []
  private size = 0
  private readonly types = new FieldTypes()
  private readonly keys = new KeyRanges()

  constructor(private readonly unit: 'line' | 'record') {}

  add(record: Uint8Array, number: number): void {
    let value: unknown
    try {
      value = JSON.parse(text(record))
    } catch (error) {
      throw new PushDecodeError(
        number,
        error instanceof SyntaxError ? error.message : String(error),
        this.unit,
      )
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new PushDecodeError(number, 'not a JSON object', this.unit)
    findKeys(record, 0, record.length, this.keys)
    const names = this.keys.decode(record)
    names.forEach((name, k) => {
      this.types.add(name, jsonValueType(this.keys.value(record, k)))
    })
    this.records.push(record)
    this.size += record.length + 1
  }

  /** The records as JSON lines, copied once into the body. */
  decoded(bytes: number): DecodedPayload {
    const body = new Uint8Array(this.size)
    let at = 0
    for (const record of this.records) {
      body.set(record, at)
      // A line break outside a JSON string is whitespace (inside one it is escaped): one record, one line.
      for (let i = record.indexOf(LF); i !== -1; i = record.indexOf(LF, i + 1)) body[at + i] = SPACE
      for (let i = record.indexOf(CR); i !== -1; i = record.indexOf(CR, i + 1)) body[at + i] = SPACE
      at += record.length
      body[at++] = LF
    }
    return { format: 'jsonl', rows: this.records.length, fields: this.types.fields(), body, bytes }
  }
}

function decodeJsonl(payload: Uint8Array): DecodedPayload {
  const records = new JsonRecords('line')
  let line = 1
  for (let start = 0; start < payload.length; line++) {
    let end = payload.indexOf(LF, start)
    if (end === -1) end = payload.length
    const record = trimmed(payload, start, end)
    if (record.length > 0) records.add(record, line)
    start = end + 1
  }
  return records.decoded(payload.length)
}

function decodeJson(payload: Uint8Array): DecodedPayload {
  const whole = trimmed(payload, 0, payload.length)
  const records = new JsonRecords('record')
  if (whole[0] !== 0x5b) {
    if (whole.length > 0) records.add(whole, 1)
    return records.decoded(payload.length)
  }
  try {
    JSON.parse(text(whole))
  } catch (error) {
    if (error instanceof PushDecodeError) throw error
    throw new PushDecodeError(1, (error as Error).message, 'record')
  }
  jsonArrayElements(whole).forEach(([start, end], i) => {
    records.add(whole.subarray(start, end), i + 1)
  })
  return records.decoded(payload.length)
}

function decodeCsv(payload: Uint8Array): DecodedPayload {
  const [header, ...records] = parseCsvText(text(payload))
  if (!header) return { format: 'jsonl', rows: 0, fields: [], body: new Uint8Array(0), bytes: payload.length }
  const names = header.map((name, i) => {
    if (name === null || name === '')
      throw new PushDecodeError(1, `column ${i + 1} of the header has no name`)
    return name
  })
  const duplicate = names.find((name, i) => names.indexOf(name) !== i)
  if (duplicate !== undefined) throw new PushDecodeError(1, `the header names '${duplicate}' twice`)
  const types = new FieldTypes()
  for (const name of names) types.add(name, undefined)
  records.forEach((record, r) => {
    if (record.length !== names.length)
      throw new PushDecodeError(r + 2, `${record.length} fields where the header has ${names.length}`)
    record.forEach((value, i) => {
      types.add(names[i]!, csvValueType(value))
    })
  })
  // CSV columns are positional, and a restarted source does not know the saved column order:
  // as JSON lines (typed by this payload's values) the rows land by name whatever their order.
  const fields = types.fields()
  let csv = ''
  for (const record of records) csv += `${record.map((value) => csvField(value, false)).join(',')}\n`
  const body = transcode(
    {
      namespace: '',
      schemaVersion: 0,
      format: 'csv',
      rows: records.length,
      body: encoder.encode(csv),
      schema: { namespace: '', fields },
    },
    'jsonl',
    fields,
  )
  return { format: 'jsonl', rows: records.length, fields, body, bytes: payload.length }
}

/** CSV records, blank lines (a trailing one) left out; an unterminated quote refuses the payload. */
function parseCsvText(csv: string): (string | null)[][] {
  try {
    return parseCsv(csv).filter((record) => !(record.length === 1 && record[0] === null))
  } catch (error) {
    throw new PushDecodeError(csv.split('\n').length, (error as Error).message)
  }
}

function decodeBytes(payload: Uint8Array): DecodedPayload {
  const body = encoder.encode(
    `${JSON.stringify({ [BYTES_COLUMN]: Buffer.from(payload).toString('base64') })}\n`,
  )
  return {
    format: 'jsonl',
    rows: 1,
    fields: [{ name: BYTES_COLUMN, type: 'string' }],
    body,
    bytes: payload.length,
  }
}

/** bytes[from, to) without the whitespace (and CR) around it. */
function trimmed(bytes: Uint8Array, from: number, to: number): Uint8Array {
  let start = from
  let end = to
  while (start < end && bytes[start]! <= 32) start++
  while (end > start && bytes[end - 1]! <= 32) end--
  return bytes.subarray(start, end)
}
