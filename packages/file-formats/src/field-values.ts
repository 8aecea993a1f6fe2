/**
 * A field's value from its text to the value its Parquet column holds, exactly or Refused. Values
 * are taken from their text, never through a JavaScript number where one would round: a long is
 * parsed as a bigint. CSV numbers and booleans may be spelled as PostgreSQL and DuckDB read them
 * (spaces around them, `+`, leading zeros, `TRUE`); a double in CSV may be `NaN`, `Infinity` or
 * `-Infinity` (any case, also `inf`), which Parquet holds as those IEEE values.
 */
import type { FieldType } from '@skippr/connector-api'
import { QUOTE } from './char-codes.js'
import { parseDate, parseTimestamp } from './date-time.js'
import { Refused } from './refusal.js'

/** A value as hyparquet-writer takes it for the column's physical type; null is NULL. */
export type Value = string | number | bigint | boolean | null

/** A value's text becomes the column's value, or throws Refused. */
export type Read = (text: string) => Value

/**
 * The reader of a JSON value's source text in a field of type `from` stored in a column of type
 * `to`. A string is its text for string, date and timestamp fields; a number or literal is read
 * from its source text; a string or json field holds any other value as its JSON text.
 */
export function jsonReader(from: FieldType, to: FieldType): Read {
  if (from === 'json') return (raw) => raw
  const read = textReader(from, to)
  if (from === 'string' || from === 'date' || from === 'timestamp')
    return (raw) => read(raw.charCodeAt(0) === QUOTE ? jsonText(raw) : raw)
  return read
}

/** Only an escape (`\ud800`) makes a lone surrogate: text read from UTF-8 holds none. */
const LONE_SURROGATE = /\p{Surrogate}/u

/** The text of a JSON string value, which UTF-8 (so Parquet) must hold exactly. */
function jsonText(literal: string): string {
  if (!literal.includes('\\')) return literal.slice(1, -1)
  const text = JSON.parse(literal) as string
  if (LONE_SURROGATE.test(text))
    throw new Refused('holds a lone UTF-16 surrogate, which UTF-8 text cannot hold')
  return text
}

/** The reader of a value's text in a field of type `from` stored in a column of type `to`. */
export function textReader(from: FieldType, to: FieldType): Read {
  const parse = PARSERS[from]
  if (to === from) return parse
  // A string column holds the text as the source wrote it, once it is known to be a `from`.
  if (to === 'string')
    return (text) => {
      parse(text)
      return text
    }
  const widen = WIDENINGS[`${from}>${to}`]
  if (!widen) throw new Error(`no widening from ${from} to ${to}`)
  return (text) => widen(parse(text))
}

const MICROS_PER_DAY = 86_400_000_000n

/** The widenings widenFieldType makes, besides any type to string. */
const WIDENINGS: Partial<Record<string, (value: Value) => Value>> = {
  'int>long': (value) => BigInt(value as number),
  'int>double': (value) => value,
  'long>double': (value) => {
    const double = Number(value as bigint)
    if (BigInt(double) !== value) throw new Refused('cannot be held exactly by a double column')
    return double
  },
  'date>timestamp': (value) => BigInt(value as number) * MICROS_PER_DAY,
}

const PARSERS: Record<FieldType, Read> = {
  string: (text) => text,
  int: parseInt32,
  long: parseInt64,
  double: parseDouble,
  boolean: parseBoolean,
  date: parseDate,
  timestamp: parseTimestamp,
  json: parseJsonText,
}

/** Digits, with a sign, leading zeros and spaces around them as both PostgreSQL and DuckDB read them. */
const INTEGER = /^[ \t]*[-+]?\d+[ \t]*$/
const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

function parseInt32(text: string): number {
  const n = INTEGER.test(text) ? Number(text) : Number.NaN
  if (!(n >= INT32_MIN && n <= INT32_MAX))
    throw new Refused(`is not an int (a whole number from ${INT32_MIN} to ${INT32_MAX})`)
  return n
}

function parseInt64(text: string): bigint {
  const n = INTEGER.test(text) ? BigInt(text) : undefined
  if (n === undefined || n < INT64_MIN || n > INT64_MAX)
    throw new Refused(`is not a long (a whole number from ${INT64_MIN} to ${INT64_MAX})`)
  return n
}

const DECIMAL = /^[ \t]*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[ \t]*$/
const NOT_FINITE = /^[ \t]*([-+]?)(inf|infinity|nan)[ \t]*$/i
/** A non-zero digit before any exponent: a number that is not 0. */
const NON_ZERO = /^[^eE]*[1-9]/

/** The double nearest to a decimal; one that overflows or underflows to 0 is not held exactly. */
function parseDouble(text: string): number {
  if (DECIMAL.test(text)) {
    const n = Number(text)
    if (!Number.isFinite(n)) throw new Refused('is beyond the range of a double (about ±1.8e308)')
    if (n === 0 && NON_ZERO.test(text))
      throw new Refused('is too small for a double (below 5e-324), which would hold it as 0')
    return n
  }
  const special = NOT_FINITE.exec(text)
  if (!special) throw new Refused('is not a double (a decimal number)')
  if (special[2]!.toLowerCase() === 'nan') return Number.NaN
  return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY
}

const BOOLEAN = /^[ \t]*(true|false)[ \t]*$/i

function parseBoolean(text: string): boolean {
  const match = BOOLEAN.exec(text)
  if (!match) throw new Refused('is not a boolean (true or false)')
  return match[1]!.length === 4
}

/** JSON text in a CSV field, kept as written. */
function parseJsonText(text: string): string {
  try {
    JSON.parse(text)
  } catch {
    throw new Refused('is not JSON text')
  }
  return text
}
