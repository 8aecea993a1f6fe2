/**
 * Type inference from sample values. A field's type is the narrowest that holds every value seen
 * (`widenFieldType`); a field seen only as null is a string. Values are judged as
 * PostgreSQL and DuckDB would load them from the same bytes.
 */
import { type Field, type FieldType, widenFieldType } from './schema.js'

const INTEGER = /^[-+]?(0|[1-9]\d*)$/
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/
/** Leading zeros mark identifiers (postcodes, account numbers) that a number would mangle. */
const LEADING_ZERO = /^[-+]?0\d/
const BOOLEAN = /^(true|false)$/i
const DATE = /^\d{4}-\d{2}-\d{2}$/
/**
 * Timestamps hold microseconds: with more digits a value is text, since PostgreSQL would round it
 * and DuckDB cut it.
 */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/
const INT_MAX = 2 ** 31 - 1
const INT_MIN = -(2 ** 31)
const LONG_MAX = 2n ** 63n - 1n
const LONG_MIN = -(2n ** 63n)

/** The type of one CSV field's text; undefined for NULL. */
export function csvValueType(value: string | null): FieldType | undefined {
  if (value === null) return undefined
  if (INTEGER.test(value)) return integerType(value)
  if (DECIMAL.test(value)) return LEADING_ZERO.test(value) ? 'string' : 'double'
  if (BOOLEAN.test(value)) return 'boolean'
  return temporalType(value) ?? 'string'
}

/**
 * The type of one JSON value, judged by its source text (a top-level value of a record, as
 * `findKeys` cuts it); undefined for null. A number is judged by its digits, not by what JSON.parse
 * rounds it to: `9007199254740993` is a long and lands as written.
 */
export function jsonValueType(text: string): FieldType | undefined {
  switch (text[0]) {
    case '"':
      return temporalType(text.includes('\\') ? (JSON.parse(text) as string) : text.slice(1, -1)) ?? 'string'
    case '{':
    case '[':
      return 'json'
    case 't':
    case 'f':
      return 'boolean'
    case 'n':
    case undefined:
      return undefined
    default:
      return jsonNumberType(text)
  }
}

/**
 * An integer within ±2^63 is an int or a long; a larger one is a string, as in CSV: no column type
 * of both sinks holds it, and its text lands exact in a string column (a double would round it).
 * A fraction or exponent is a double, unless it overflows one (`1e400`): a string then too.
 */
function jsonNumberType(text: string): FieldType {
  if (INTEGER.test(text)) return integerType(text)
  return Number.isFinite(Number(text)) ? 'double' : 'string'
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

/**
 * Two types seen in one sample: the wider (`widenFieldType`), except that a JSON key holding nested
 * values beside other values is `json`, which holds each of them as the JSON it is. As a string
 * column it would hold their text, which DuckDB's JSON reader prints anew (`1.50` as `1.5`).
 */
function sampledType(a: FieldType, b: FieldType): FieldType {
  return a === 'json' || b === 'json' ? 'json' : widenFieldType(a, b)
}

/** Accumulates the fields of a sample: first-seen order, types widened over every value. */
export class FieldTypes {
  private readonly types = new Map<string, FieldType | undefined>()

  add(name: string, type: FieldType | undefined): void {
    const seen = this.types.get(name)
    if (!this.types.has(name) || seen === undefined) this.types.set(name, type)
    else if (type !== undefined) this.types.set(name, sampledType(seen, type))
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
