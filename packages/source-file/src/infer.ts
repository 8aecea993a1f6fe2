/**
 * Type inference from sample values. A field's type is the narrowest that holds every value seen
 * (connector-api's `widenFieldType`); a field seen only as null is a string. Values are judged as
 * PostgreSQL and DuckDB would load them from the same bytes.
 */
import { type Field, type FieldType, widenFieldType } from '@skippr/connector-api'
import type { CsvField } from './csv.js'

/** Bytes of records a sample holds, per file. */
export const SAMPLE_BYTES = 256 * 1024
/** Records discovery samples across files before it stops opening more of them. */
export const DISCOVERY_ROWS = 20_000

const INTEGER = /^[-+]?(0|[1-9]\d*)$/
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/
/** Leading zeros mark identifiers (postcodes, account numbers) that a number would mangle. */
const LEADING_ZERO = /^[-+]?0\d/
const BOOLEAN = /^(true|false)$/i
const DATE = /^\d{4}-\d{2}-\d{2}$/
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/
const INT_MAX = 2 ** 31 - 1
const INT_MIN = -(2 ** 31)
const LONG_MAX = 2n ** 63n - 1n
const LONG_MIN = -(2n ** 63n)

/** The type of one CSV field's text; undefined for NULL. */
export function csvValueType(value: CsvField): FieldType | undefined {
  if (value === null) return undefined
  if (INTEGER.test(value)) return integerType(value)
  if (DECIMAL.test(value)) return LEADING_ZERO.test(value) ? 'string' : 'double'
  if (BOOLEAN.test(value)) return 'boolean'
  return temporalType(value) ?? 'string'
}

/** The type of one JSON value; undefined for null. */
export function jsonValueType(value: unknown): FieldType | undefined {
  if (value === null || value === undefined) return undefined
  if (typeof value === 'boolean') return 'boolean'
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return 'double'
    if (value >= INT_MIN && value <= INT_MAX) return 'int'
    return Math.abs(value) < 2 ** 63 ? 'long' : 'double'
  }
  if (typeof value === 'string') return temporalType(value) ?? 'string'
  return 'json'
}

function integerType(text: string): FieldType {
  const n = Number(text)
  if (n >= INT_MIN && n <= INT_MAX) return 'int'
  const big = BigInt(text)
  return big >= LONG_MIN && big <= LONG_MAX ? 'long' : 'string'
}

function temporalType(text: string): FieldType | undefined {
  const pattern = DATE.test(text) ? 'date' : TIMESTAMP.test(text) ? 'timestamp' : undefined
  return pattern && isCalendarDate(text.slice(0, 10)) ? pattern : undefined
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** `yyyy-mm-dd` names a day of the (proleptic Gregorian) calendar: no 2023-02-29, no month 13. */
function isCalendarDate(ymd: string): boolean {
  const year = Number(ymd.slice(0, 4))
  const month = Number(ymd.slice(5, 7))
  const day = Number(ymd.slice(8, 10))
  if (month < 1 || month > 12 || day < 1) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number))
}

/** Accumulates the fields of a sample: first-seen order, types widened over every value. */
export class FieldTypes {
  private readonly types = new Map<string, FieldType | undefined>()

  add(name: string, type: FieldType | undefined): void {
    const seen = this.types.get(name)
    if (!this.types.has(name) || seen === undefined) this.types.set(name, type)
    else if (type !== undefined) this.types.set(name, widenFieldType(seen, type))
  }

  /** The fields seen; one seen only as null is a string, or left out with `onlyTyped`. */
  fields(onlyTyped = false): Field[] {
    const fields: Field[] = []
    for (const [name, type] of this.types) {
      if (type !== undefined || !onlyTyped) fields.push({ name, type: type ?? 'string' })
    }
    return fields
  }
}
