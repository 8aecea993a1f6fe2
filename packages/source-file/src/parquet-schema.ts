/**
 * A Parquet file's columns as the contract's fields, and each column's values as the CSV encoder
 * takes them. Every value keeps its precision: timestamps to the microsecond (nanoseconds are cut to
 * microseconds, the finest PostgreSQL and DuckDB hold), decimals as exact decimal text, 64-bit
 * integers as `bigint`. A type with no faithful field is refused by name rather than approximated.
 */
import type { Field, FieldType } from '@skippr/connector-api'
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
  if (tree.children.length > 0 || element.repetition_type === 'REPEATED')
    return { field: field('json'), cell: jsonCell }
  const decimal = decimalOf(element)
  if (decimal) {
    if (element.type === 'BYTE_ARRAY')
      throw new ParquetTypeError(file, element.name, 'DECIMAL stored as BYTE_ARRAY')
    const type = decimal.precision > DOUBLE_DIGITS ? 'string' : 'double'
    return { field: field(type), cell: (v) => decimalText(v, decimal.scale) }
  }
  if (isTime(element)) return { field: field('string'), cell: (v) => timeText(v, element) }
  const type = leafType(file, element)
  if (type === 'json') return { field: field(type), cell: jsonCell }
  if (type !== 'string') return { field: field(type), cell: same }
  const isEnum = element.converted_type === 'ENUM' || element.logical_type?.type === 'ENUM'
  return { field: field(type), cell: isEnum ? enumText : bytesAsText }
}

const same = (value: unknown): unknown => value

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
  return isoFromMicros(micros).slice(11, -1)
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

/** Decoding of the rich types: microsecond ISO timestamps and `YYYY-MM-DD` dates, as text. */
export const parsers: Partial<ParquetParsers> = {
  timestampFromMilliseconds: (millis) => isoFromMicros(millis * 1000n),
  timestampFromMicroseconds: (micros) => isoFromMicros(micros),
  timestampFromNanoseconds: (nanos) => isoFromMicros(nanos / 1000n - (nanos % 1000n < 0n ? 1n : 0n)),
  dateFromDays: (days) => dateText(days),
}

function isoFromMicros(micros: bigint): string {
  // Number arithmetic while it is exact (±285 years around 1970); a Date for the rest.
  if (micros < -MAX_EXACT_MICROS || micros > MAX_EXACT_MICROS) {
    const sub = Number(((micros % 1000n) + 1000n) % 1000n)
    const iso = new Date(Number((micros - BigInt(sub)) / 1000n)).toISOString()
    return `${iso.slice(0, -1)}${pad(sub, 3)}Z`
  }
  const us = Number(micros)
  const days = Math.floor(us / MICROS_PER_DAY)
  const inDay = us - days * MICROS_PER_DAY
  const seconds = Math.floor(inDay / 1e6)
  const time = `${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}`
  return `${dateText(days)}T${time}.${pad(inDay - seconds * 1e6, 6)}Z`
}

const MAX_EXACT_MICROS = BigInt(Number.MAX_SAFE_INTEGER)
const MICROS_PER_DAY = 86_400_000_000

/** Days since 1970-01-01 as `YYYY-MM-DD` (the proleptic Gregorian calendar, as ISO 8601 and Date have it). */
function dateText(days: number): string {
  // Howard Hinnant's civil_from_days: eras of 400 years, March-based years.
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  )
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0)
  const y = year >= 0 && year <= 9999 ? pad(year, 4) : `${year < 0 ? '-' : '+'}${pad(Math.abs(year), 6)}`
  return `${y}-${pad(month, 2)}-${pad(day, 2)}`
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0')
}

/** A nested value as JSON text: 64-bit integers as numbers when exact, else as strings; bytes in base64. */
function jsonCell(value: unknown): unknown {
  if (value === null || value === undefined) return null
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()
    if (v instanceof Uint8Array) return Buffer.from(v).toString('base64')
    return v
  })
}
