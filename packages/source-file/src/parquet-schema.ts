/**
 * A Parquet file's columns as the contract's fields, and each column's values as the CSV encoder
 * takes them. Every value keeps its precision: timestamps to the microsecond (nanoseconds are cut to
 * microseconds, the finest PostgreSQL and DuckDB hold), decimals as exact decimal text, 64-bit
 * integers as `bigint`. A type with no faithful field is refused by name rather than approximated.
 */
import { dateText, type Field, type FieldType, timestampText } from '@skippr/connector-api'
import type { FileMetaData, ParquetParsers, SchemaElement, SchemaTree } from 'hyparquet'
import { parquetSchema } from 'hyparquet'
import { ParquetTypeError } from './errors.js'

/** A decimal of more digits than this does not survive a double: it becomes a string column. */
const DOUBLE_DIGITS = 15

/** A top-level column: its field, and how its decoded values become cells. */
export interface ParquetColumn {
  readonly field: Field
  readonly cell: (value: unknown) => unknown
}

/** The columns of a file, in its order; throws ParquetTypeError for a column no field type holds. */
export function parquetColumns(file: string, metadata: FileMetaData): ParquetColumn[] {
  return parquetSchema(metadata).children.map((tree) => column(file, tree))
}

function column(file: string, tree: SchemaTree): ParquetColumn {
  const { element } = tree
  const nullable = element.repetition_type !== 'REQUIRED'
  const field = (type: FieldType): Field => ({ name: element.name, type, nullable })
  // Groups (structs, lists, maps) and repeated leaves arrive as objects and arrays.
  if (tree.children.length > 0 || element.repetition_type === 'REPEATED') {
    const withEmptyLists = emptyListsOf(tree)
    return { field: field('json'), cell: withEmptyLists ? (v) => jsonCell(withEmptyLists(v)) : jsonCell }
  }
  const decimal = decimalOf(element)
  if (decimal) {
    if (element.type === 'BYTE_ARRAY')
      throw new ParquetTypeError(file, element.name, 'DECIMAL stored as BYTE_ARRAY')
    const type = decimal.precision > DOUBLE_DIGITS ? 'string' : 'double'
    return { field: field(type), cell: (v) => decimalText(v, decimal.scale) }
  }
  if (isTime(element)) return { field: field('string'), cell: (v) => timeText(v, element) }
  const type = leafType(file, element)
  if (type === 'json') return { field: field(type), cell: jsonTextCell }
  if (type === 'double') return { field: field(type), cell: doubleCell }
  if (type !== 'string') return { field: field(type), cell: same }
  const isEnum = element.converted_type === 'ENUM' || element.logical_type?.type === 'ENUM'
  return { field: field(type), cell: isEnum ? enumText : bytesAsText }
}

const same = (value: unknown): unknown => value

/**
 * A double as the CSV takes it: −0 as the text `-0`, which PostgreSQL and DuckDB read back as −0
 * (a number is written as `String` writes it, and `String(-0)` is `0`). NaN and ±Infinity are
 * written `NaN`, `Infinity`, `-Infinity`, which both read as those values.
 */
function doubleCell(value: unknown): unknown {
  return Object.is(value, -0) ? '-0' : value
}

/** Bytes with no text annotation (a binary column), in base64. */
function bytesAsText(value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value
}

/** An enum's symbol: UTF-8 text that the decoder leaves as bytes (only `STRING` columns are decoded). */
function enumText(value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value
}

function isTime(element: SchemaElement): boolean {
  const converted = element.converted_type
  return element.logical_type?.type === 'TIME' || converted === 'TIME_MILLIS' || converted === 'TIME_MICROS'
}

/** A time of day (milliseconds in INT32, micro- or nanoseconds in INT64) as `HH:MM:SS.ffffff`. */
function timeText(value: unknown, element: SchemaElement): string | null {
  if (value === null || value === undefined) return null
  const logical = element.logical_type
  const unit =
    logical?.type === 'TIME' ? logical.unit : element.converted_type === 'TIME_MILLIS' ? 'MILLIS' : 'MICROS'
  const raw = BigInt(value as number | bigint)
  const micros = unit === 'MILLIS' ? raw * 1000n : unit === 'NANOS' ? raw / 1000n : raw
  return timestampText(micros).slice(11, -1)
}

/** The field type of a primitive column, from its logical (or legacy converted) type. */
function leafType(file: string, element: SchemaElement): FieldType {
  const logical = element.logical_type
  const converted = element.converted_type
  if (logical?.type === 'TIMESTAMP' || converted === 'TIMESTAMP_MILLIS' || converted === 'TIMESTAMP_MICROS')
    return 'timestamp'
  if (logical?.type === 'DATE' || converted === 'DATE') return 'date'
  if (logical?.type === 'JSON' || converted === 'JSON') return 'json'
  if (logical?.type === 'GEOMETRY' || logical?.type === 'GEOGRAPHY') return 'json'
  if (logical?.type === 'INTEGER') {
    if (logical.bitWidth === 64 || (logical.bitWidth === 32 && !logical.isSigned)) return 'long'
    return 'int'
  }
  if (converted === 'UINT_64' || converted === 'INT_64' || converted === 'UINT_32') return 'long'
  if (converted?.startsWith('INT_') || converted?.startsWith('UINT_')) return 'int'
  if (
    converted === 'BSON' ||
    converted === 'INTERVAL' ||
    logical?.type === 'BSON' ||
    logical?.type === 'INTERVAL'
  )
    throw new ParquetTypeError(file, element.name, converted ?? logical?.type ?? '')
  if (logical?.type === 'VARIANT') throw new ParquetTypeError(file, element.name, 'VARIANT')
  switch (element.type) {
    case 'BOOLEAN':
      return 'boolean'
    case 'INT32':
      return 'int'
    case 'INT64':
      return 'long'
    case 'INT96':
      return 'timestamp'
    case 'FLOAT':
    case 'DOUBLE':
      return 'double'
    case 'FIXED_LEN_BYTE_ARRAY':
      return logical?.type === 'FLOAT16' ? 'double' : 'string'
    default:
      return 'string'
  }
}

function decimalOf(element: SchemaElement): { precision: number; scale: number } | undefined {
  if (element.logical_type?.type === 'DECIMAL') return element.logical_type
  if (element.converted_type === 'DECIMAL')
    return { precision: element.precision ?? 0, scale: element.scale ?? 0 }
  return undefined
}

/**
 * The metadata to decode with: top-level decimal columns lose their annotation, so that they arrive
 * as unscaled integers (the library would turn them into doubles) for `decimalText` to write exactly.
 */
export function withRawDecimals(metadata: FileMetaData): FileMetaData {
  const tree = parquetSchema(metadata)
  const leaves = new Set(tree.children.filter((c) => c.children.length === 0).map((c) => c.element))
  const schema = metadata.schema.map((element) => {
    if (!leaves.has(element) || !decimalOf(element)) return element
    const { converted_type: _converted, logical_type: _logical, ...raw } = element
    return raw
  })
  return { ...metadata, schema }
}

/** An unscaled decimal (number, bigint, or big-endian two's complement bytes) as exact text. */
export function decimalText(unscaled: unknown, scale: number): string | null {
  if (unscaled === null || unscaled === undefined) return null
  let value: bigint
  if (unscaled instanceof Uint8Array) value = bytesToBigInt(unscaled)
  else value = BigInt(unscaled as number | bigint)
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0')
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits
  return negative ? `-${text}` : text
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  const bits = BigInt(bytes.length * 8)
  return bytes.length > 0 && (bytes[0] as number) & 0x80 ? value - (1n << bits) : value
}

/**
 * Decoding of the rich types, as the contract's text (connector-api's batch.ts): microsecond
 * timestamps and dates in any year, at the top level and inside lists, structs and maps alike (there
 * as JSON strings, which both sinks cast back: `(j->>'d')::date`, `CAST(j->>'d' AS DATE)`).
 */
export const parsers: Partial<ParquetParsers> = {
  timestampFromMilliseconds: (millis) => infinityOf(millis, INFINITE_TICKS) ?? timestampText(millis * 1000n),
  timestampFromMicroseconds: (micros) => infinityOf(micros, INFINITE_TICKS) ?? timestampText(micros),
  timestampFromNanoseconds: (nanos) =>
    infinityOf(nanos, INFINITE_TICKS) ?? timestampText(nanos / 1000n - (nanos % 1000n < 0n ? 1n : 0n)),
  dateFromDays: (days) => infinityOf(days, INFINITE_DAYS) ?? dateText(days),
  stringFromBytes: (bytes: Uint8Array | undefined) => bytes && text.decode(bytes),
  jsonFromBytes: (bytes: Uint8Array | undefined) => bytes && new JsonText(json.decode(bytes)),
}

/**
 * Text keeps a leading U+FEFF: it is part of the value (TextDecoder drops it by default). Bytes
 * that are not UTF-8 fail the read (ParquetTextInvalidError) rather than become U+FFFD.
 */
const text = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true })
/** JSON text may start with a byte-order mark, which is not part of the JSON value (RFC 8259). */
const json = new TextDecoder()

/**
 * DuckDB's infinity in a Parquet file: the type's largest value, and its negation for −infinity
 * (days in INT32, ticks of any unit in INT64), which it reads back as ±infinity.
 */
const INFINITE_DAYS = 2_147_483_647
const INFINITE_TICKS = 9_223_372_036_854_775_807n

function infinityOf<T extends number | bigint>(value: T, infinite: T): string | undefined {
  if (value === infinite) return 'infinity'
  return value === -infinite ? '-infinity' : undefined
}

/**
 * The text of a JSON column, kept as written: parsing it would round integers beyond 2^53 and
 * turn −0 into 0. Inside a nested value it is parsed, to be part of that value's JSON.
 */
class JsonText {
  constructor(readonly text: string) {}
}

/** A JSON column's text as it is; a GEOMETRY or GEOGRAPHY value (GeoJSON objects) as JSON. */
function jsonTextCell(value: unknown): unknown {
  return value instanceof JsonText ? value.text : jsonCell(value)
}

/**
 * A nested value as JSON text: 64-bit integers as numbers when exact, else as strings; bytes in
 * base64. JSON has no NaN, ±Infinity, and PostgreSQL's jsonb keeps no −0 (its numbers are numeric):
 * those doubles become the strings `"NaN"`, `"Infinity"`, `"-Infinity"` and `"-0"`, which both
 * sinks cast back to the double (`(j->>0)::float8`, `(j->>0)::DOUBLE`). JSON.stringify would write
 * the first three as `null` and −0 as `0`.
 */
function jsonCell(value: unknown): unknown {
  if (value === null || value === undefined) return null
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0) ? v : specialDoubleText(v)
    if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()
    if (v instanceof Uint8Array) return Buffer.from(v).toString('base64')
    if (v instanceof JsonText) return JSON.parse(v.text)
    return v
  })
}

function specialDoubleText(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Number.POSITIVE_INFINITY) return 'Infinity'
  return v === Number.NEGATIVE_INFINITY ? '-Infinity' : '-0'
}

type Repair = (value: unknown) => unknown

/**
 * What turns the decoder's `null` for an empty repeated leaf back into `[]`: hyparquet assembles a
 * REPEATED primitive with no elements (a legacy 1- or 2-level list, which DuckDB reads as `[]`) as
 * null, though a repeated field is never null. Undefined for a column without repeated leaves.
 */
function emptyListsOf(tree: SchemaTree): Repair | undefined {
  const repeated = tree.element.repetition_type === 'REPEATED'
  if (tree.children.length === 0) return repeated ? (v) => v ?? [] : undefined
  const [only] = tree.children
  if (isListLike(tree) && only) {
    // A 2-level list's repeated leaf is the list itself (nullish for a NULL list).
    if (only.children.length === 0) return (v) => (v === null ? [] : v)
    const element = only.children[0]
    const inner = element && emptyListsOf(element)
    return inner && ((v) => (Array.isArray(v) ? v.map(inner) : v))
  }
  if (tree.element.converted_type === 'MAP' || tree.element.converted_type === 'MAP_KEY_VALUE')
    return undefined
  const fields = tree.children.flatMap((child) => {
    const repair = emptyListsOf(child)
    return repair ? [[child.element.name, repair] as const] : []
  })
  if (fields.length === 0) return undefined
  const struct: Repair = (v) => {
    if (v === null || typeof v !== 'object') return v
    const record = v as Record<string, unknown>
    for (const [name, repair] of fields) record[name] = repair(record[name])
    return record
  }
  return repeated ? (v) => (Array.isArray(v) ? v.map(struct) : v) : struct
}

/** A LIST-annotated group of one repeated child, as hyparquet assembles into an array. */
function isListLike(tree: SchemaTree): boolean {
  const [only] = tree.children
  return (
    tree.element.converted_type === 'LIST' &&
    tree.children.length === 1 &&
    only !== undefined &&
    only.children.length <= 1 &&
    only.element.repetition_type === 'REPEATED'
  )
}
