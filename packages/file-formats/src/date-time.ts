/**
 * Dates and timestamps from their text to what Parquet holds: days since 1970-01-01 for a DATE,
 * microseconds since 1970-01-01T00:00:00Z for a TIMESTAMP (MICROS, adjusted to UTC), computed in
 * the proleptic Gregorian calendar as PostgreSQL and DuckDB count, exactly or refused.
 */
import { COLON, DOT, MINUS, PLUS, UPPER_T, UPPER_Z, ZERO } from './char-codes.js'
import { Refused } from './refusal.js'

/** `infinity` and `-infinity` as PostgreSQL spells the dates and timestamps beyond all others. */
const INFINITY = /^[-+]?infinity$/i

const DATE = /^(\d{4,})-(\d\d)-(\d\d)( \(BC\))?$/
/** DuckDB reads the INT32 extremes as ±infinity: one day short of them is the last date held. */
const MAX_DAYS = 2 ** 31 - 2

/** Days since 1970-01-01 of `YYYY-MM-DD`, a year past 9999 in more digits, or `YYYY-MM-DD (BC)`. */
export function parseDate(text: string): number {
  const match = DATE.exec(text)
  if (!match) {
    if (INFINITY.test(text)) throw new Refused('is an infinite date, which a Parquet DATE cannot hold')
    throw new Refused('is not a date (YYYY-MM-DD, a year past 9999 in more digits, or YYYY-MM-DD (BC))')
  }
  const days = civilDays(Number(match[1]), Number(match[2]), Number(match[3]), match[4] !== undefined)
  if (!(Math.abs(days) <= MAX_DAYS))
    throw new Refused('is beyond the dates a Parquet DATE holds (about 5.8 million years from 1970)')
  return days
}

/**
 * A date, then an optional time (after `T` or a space; seconds and fraction optional) and an
 * optional offset (`Z`, `±HH`, `±HH:MM`, `±HHMM`, `±HH:MM:SS`); no offset is UTC, as the sinks'
 * sessions read it.
 */
const TIMESTAMP =
  /^(\d{4,})-(\d\d)-(\d\d)( \(BC\))?(?:[T ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?(?:[Zz]|([+-])(\d\d)(?::?(\d\d)(?::?(\d\d))?)?)?)?$/
/** DuckDB reads the INT64 extremes as ±infinity: one microsecond short of them is the last held. */
const MAX_MICROS = 2n ** 63n - 2n
const MAX_SECONDS = Number(MAX_MICROS / 1_000_000n) + 1
/** Seconds whose microseconds stay below 2^53, so a Number holds them exactly. */
const EXACT_SECONDS = Math.floor(Number.MAX_SAFE_INTEGER / 1e6) - 1
const MICROS_DIGITS = 6

/** Microseconds since 1970-01-01T00:00:00Z, exactly, of any form TIMESTAMP takes. */
export function parseTimestamp(text: string): bigint {
  return commonTimestamp(text) ?? anyTimestamp(text)
}

/**
 * The shape sources write, `YYYY-MM-DDTHH:MM:SS[.ffffff](Z|±HH:MM)`, read without the regex, which
 * takes three times as long; undefined for any other text (anyTimestamp reads it, or says why not).
 */
function commonTimestamp(text: string): bigint | undefined {
  const clock = commonClock(text)
  if (clock === undefined) return undefined
  let i = 19
  let micros = 0
  if (text.charCodeAt(i) === DOT) {
    const start = ++i
    while (digitsAt(text, i, 1) >= 0) i++
    if (i === start || i - start > MICROS_DIGITS) return undefined
    micros = digitsAt(text, start, i - start) * 10 ** (MICROS_DIGITS - (i - start))
  }
  const offset = commonOffset(text, i)
  if (offset === undefined) return undefined
  const year = digitsAt(text, 0, 4)
  const month = digitsAt(text, 5, 2)
  const day = digitsAt(text, 8, 2)
  if (year < 0 || month < 0 || day < 0) return undefined
  // Last, as only it throws: any text not of the common shape has gone to anyTimestamp by now.
  const days = civilDays(year, month, day, false)
  return instant(days * 86_400 + clock - offset, micros)
}

/** Seconds into the day of `YYYY-MM-DDTHH:MM:SS…`, or undefined if the text is not shaped so. */
function commonClock(text: string): number | undefined {
  if (
    text.charCodeAt(4) !== MINUS ||
    text.charCodeAt(7) !== MINUS ||
    text.charCodeAt(10) !== UPPER_T ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON
  )
    return undefined
  const hours = digitsAt(text, 11, 2)
  const minutes = digitsAt(text, 14, 2)
  const seconds = digitsAt(text, 17, 2)
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59 || seconds < 0 || seconds > 59) return undefined
  return hours * 3_600 + minutes * 60 + seconds
}

/** Seconds east of UTC of the `Z` or `±HH:MM` that ends the text at `at`, or undefined if none does. */
function commonOffset(text: string, at: number): number | undefined {
  const sign = text.charCodeAt(at)
  if (at === text.length - 1 && sign === UPPER_Z) return 0
  if (at !== text.length - 6 || (sign !== PLUS && sign !== MINUS) || text.charCodeAt(at + 3) !== COLON)
    return undefined
  const hours = digitsAt(text, at + 1, 2)
  const minutes = digitsAt(text, at + 4, 2)
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return undefined
  return (sign === MINUS ? -1 : 1) * (hours * 3_600 + minutes * 60)
}

/** The value of the `count` decimal digits at `from`, or -1 if they are not all digits. */
function digitsAt(text: string, from: number, count: number): number {
  let value = 0
  for (let i = from; i < from + count; i++) {
    const digit = text.charCodeAt(i) - ZERO
    if (!(digit >= 0 && digit <= 9)) return -1
    value = value * 10 + digit
  }
  return value
}

/** Every form TIMESTAMP takes. */
function anyTimestamp(text: string): bigint {
  const m = TIMESTAMP.exec(text)
  if (!m) {
    if (INFINITY.test(text))
      throw new Refused('is an infinite timestamp, which a Parquet timestamp cannot hold')
    throw new Refused('is not a timestamp (ISO 8601: YYYY-MM-DDTHH:MM:SS.ffffff with Z or an offset)')
  }
  const days = civilDays(Number(m[1]), Number(m[2]), Number(m[3]), m[4] !== undefined)
  const hours = Number(m[5] ?? 0)
  const minutes = Number(m[6] ?? 0)
  const seconds = Number(m[7] ?? 0)
  const offset = m[9] === undefined ? 0 : offsetSeconds(m[9], m[10]!, m[11], m[12])
  if (hours > 23 || minutes > 59 || seconds > 59) throw new Refused('is not a time of day')
  return instant(days * 86_400 + hours * 3_600 + minutes * 60 + seconds - offset, fractionMicros(m[8] ?? ''))
}

/** The microseconds of a second's decimal fraction (its digits after the dot), if none is finer. */
function fractionMicros(fraction: string): number {
  if (fraction.length > MICROS_DIGITS && /[1-9]/.test(fraction.slice(MICROS_DIGITS)))
    throw new Refused('has digits finer than a microsecond, which a Parquet timestamp (MICROS) cannot hold')
  return Number(fraction.slice(0, MICROS_DIGITS).padEnd(MICROS_DIGITS, '0'))
}

/** Microseconds of `seconds` since the epoch (an integer) and `micros` more, if a timestamp holds them. */
function instant(seconds: number, micros: number): bigint {
  const beyond = 'is beyond the timestamps a Parquet timestamp holds (about 292,000 years from 1970)'
  if (!(Math.abs(seconds) <= MAX_SECONDS)) throw new Refused(beyond)
  // Number arithmetic, faster than BigInt's, where it is exact: within about 285 years of 1970.
  const exact =
    Math.abs(seconds) <= EXACT_SECONDS
      ? BigInt(seconds * 1e6 + micros)
      : BigInt(seconds) * 1_000_000n + BigInt(micros)
  if (exact > MAX_MICROS || exact < -MAX_MICROS) throw new Refused(beyond)
  return exact
}

/** Seconds east of UTC of an offset the TIMESTAMP regex matched in parts. */
function offsetSeconds(sign: string, hours: string, minutes = '0', seconds = '0'): number {
  const h = Number(hours)
  const m = Number(minutes)
  const s = Number(seconds)
  if (h > 23 || m > 59 || s > 59) throw new Refused('has an offset that is not one (±HH:MM)')
  return (sign === '-' ? -1 : 1) * (h * 3_600 + m * 60 + s)
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * Days since 1970-01-01 of a date in the proleptic Gregorian calendar; a BC year is 1 - year in
 * astronomical years, and there is no year 0 (H. Hinnant, "chrono-Compatible Low-Level Date
 * Algorithms", days_from_civil).
 */
function civilDays(written: number, month: number, day: number, bc: boolean): number {
  const year = bc ? 1 - written : written
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const monthDays = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]
  if (written === 0 || monthDays === undefined || day < 1 || day > monthDays)
    throw new Refused('is not a day of the calendar')
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}
