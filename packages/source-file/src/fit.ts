/**
 * Whether a JSON value, as bytes, lands exactly in a column of a given type. Records after a file's
 * sample are never parsed, yet a sink would alter some values that do not fit their column without
 * a word: DuckDB's read_json rounds `1.5` into an INTEGER and cuts the time off
 * `"2020-01-02 10:30:00"` in a DATE; both sinks read `"007"` into an integer as 7 and `1` or
 * `"yes"` into a boolean as true. This is the check of every value of such a column: a look at its
 * first bytes and its shape, no decoding. A value it does not pass is judged whole
 * (`jsonValueType`) and widens the column. String and json columns hold any value's text.
 */
import type { FieldType } from '@skippr/connector-api'
import {
  COLON,
  DOT,
  isDigit,
  LOWER_E,
  LOWER_F,
  LOWER_N,
  LOWER_T,
  MINUS,
  PLUS,
  QUOTE,
  SPACE,
  UPPER_E,
  UPPER_T,
} from './bytes.js'

/** Digits that never reach 2^31 (int) or 2^63 (long); more are judged whole. */
const INT_DIGITS = 9
const LONG_DIGITS = 18
/** Digits of a plain decimal that never overflow a double (its largest is about 1.8e308). */
const DOUBLE_DIGITS = 300
/** With an exponent of at most 2 digits (`e-05`), a number this short stays below 1e120. */
const SHORT_WITH_EXPONENT = 20

/** What a column's values are checked as: a small integer, for the switch that runs per value. */
const CHECKS: Partial<Record<FieldType, number>> = {
  int: 1,
  long: 2,
  double: 3,
  boolean: 4,
  date: 5,
  timestamp: 6,
}

/** The check of a column's values, or 0 for a type that holds any value (string, json). */
export function checkOf(type: FieldType): number {
  return CHECKS[type] ?? 0
}

/**
 * True when the value in bytes[start, end) (whitespace around it allowed) certainly lands as it is
 * in a column checked as `check` (`checkOf`); false when it must be judged whole. Null fits every type.
 */
export function fits(bytes: Uint8Array, start: number, end: number, check: number): boolean {
  let from = start
  let to = end
  while (from < to && bytes[from]! <= SPACE) from++
  while (to > from && bytes[to - 1]! <= SPACE) to--
  // No value at all is not valid JSON: the sink refuses the line.
  if (from === to) return true
  const first = bytes[from]!
  if (first === LOWER_N) return true
  switch (check) {
    case 1:
      return isPlainInteger(bytes, from, to, INT_DIGITS)
    case 2:
      return isPlainInteger(bytes, from, to, LONG_DIGITS)
    case 3:
      return isPlainDecimal(bytes, from, to)
    case 4:
      return first === LOWER_T || first === LOWER_F
    case 5:
      return to - from === 12 && first === QUOTE && isDate(bytes, from + 1)
    case 6:
      return (
        first === QUOTE &&
        to - from >= 12 &&
        isDate(bytes, from + 1) &&
        isTimeOrEnd(bytes, from + 11, to) &&
        !holdsSubMicros(bytes, from, to)
      )
    default:
      return true
  }
}

/** `-?\d{1,digits}`: an integer of at most `digits` digits. */
function isPlainInteger(bytes: Uint8Array, from: number, to: number, digits: number): boolean {
  const at = bytes[from] === MINUS ? from + 1 : from
  if (at === to || to - at > digits) return false
  for (let i = at; i < to; i++) if (!isDigit(bytes[i])) return false
  return true
}

/**
 * A number judged a double or narrower: a fraction too short to overflow (at most 300 digits, or
 * 20 bytes with a 2-digit exponent), or an integer within the long digits. A longer integer is a
 * string (`jsonValueType`).
 */
function isPlainDecimal(bytes: Uint8Array, from: number, to: number): boolean {
  const first = bytes[from]
  if (!(first === MINUS || isDigit(first))) return false
  let fraction = false
  for (let i = from; i < to; i++) {
    const c = bytes[i]
    if (c === DOT) fraction = true
    else if (c === LOWER_E || c === UPPER_E) {
      const sign = bytes[i + 1] === MINUS || bytes[i + 1] === PLUS ? 1 : 0
      return to - from <= SHORT_WITH_EXPONENT && to - (i + 1 + sign) <= 2
    }
  }
  return fraction ? to - from <= DOUBLE_DIGITS : to - from <= LONG_DIGITS
}

/**
 * `dddd-dd-dd` at `at`, by its punctuation: a date of another shape (`01/02/2020`, `Jan 2 2020`) is
 * one a sink could read its own way; a letter in place of a digit is refused by both sinks.
 */
function isDate(bytes: Uint8Array, at: number): boolean {
  return bytes[at + 4] === MINUS && bytes[at + 7] === MINUS && isDigit(bytes[at])
}

/** After a date in a string: its closing quote (a date in a timestamp column is its midnight), or `[T ]dd:dd`. */
function isTimeOrEnd(bytes: Uint8Array, at: number, to: number): boolean {
  if (at === to - 1) return bytes[at] === QUOTE
  const separator = bytes[at]
  return (separator === UPPER_T || separator === SPACE) && bytes[at + 3] === COLON
}

/** Fraction digits a timestamp holds: PostgreSQL rounds more, DuckDB cuts them. */
const MICROS_DIGITS = 6

/** Whether more than a microsecond's digits follow the `.` at `dot`. */
export function pastMicros(bytes: Uint8Array, dot: number): boolean {
  let digits = 0
  for (let i = dot + 1; digits <= MICROS_DIGITS && isDigit(bytes[i]); i++) digits++
  return digits > MICROS_DIGITS
}

/** Whether the timestamp text in bytes[from, to) has more than a microsecond's digits. */
function holdsSubMicros(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] === DOT) return pastMicros(bytes, i)
  return false
}
