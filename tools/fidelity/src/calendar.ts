/**
 * Dates as days and timestamps as microseconds since 1970-01-01 UTC, in the proleptic Gregorian
 * calendar with astronomical years (year 0 is 1 BC), and their text forms. Days and microseconds
 * are what both sinks are read back as, so every comparison is between integers.
 */

import { type CivilDate, civilFromDays } from '@skippr/connector-api'

export { civilFromDays }

export const MICROS_PER_DAY = 86_400_000_000n

/** Days since 1970-01-01 of a civil date (H. Hinnant's `days_from_civil`, valid for any year). */
export function daysFromCivil({ year, month, day }: CivilDate): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

const pad = (n: number | bigint, width: number) => n.toString().padStart(width, '0')

/** `YYYY-MM-DD` for years 1–9999, the only form CSV and JSON-lines files have for a date. */
export function isoDate(days: number): string {
  const { year, month, day } = civilFromDays(days)
  if (year < 1 || year > 9999) throw new RangeError(`year ${year} has no YYYY-MM-DD form`)
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`
}

/** The date and the time of day (microseconds) of an instant. */
export function splitMicros(micros: bigint): { days: number; timeOfDay: bigint } {
  let days = micros / MICROS_PER_DAY
  let timeOfDay = micros % MICROS_PER_DAY
  if (timeOfDay < 0n) {
    days -= 1n
    timeOfDay += MICROS_PER_DAY
  }
  return { days: Number(days), timeOfDay }
}

/** `HH:MM:SS` and the six fraction digits of a time of day. */
export function clock(timeOfDay: bigint): { hms: string; fraction: string } {
  const seconds = timeOfDay / 1_000_000n
  const hms = `${pad(seconds / 3600n, 2)}:${pad((seconds / 60n) % 60n, 2)}:${pad(seconds % 60n, 2)}`
  return { hms, fraction: pad(timeOfDay % 1_000_000n, 6) }
}

/** PostgreSQL's input form of a date: `YYYY-MM-DD`, with ` BC` for year 0 and before. */
export function postgresDate(days: number): string {
  const { year, month, day } = civilFromDays(days)
  const era = year <= 0 ? ' BC' : ''
  return `${pad(year <= 0 ? 1 - year : year, 4)}-${pad(month, 2)}-${pad(day, 2)}${era}`
}

/** PostgreSQL's input form of a timestamptz in UTC, BC marked the same way. */
export function postgresTimestamp(micros: bigint): string {
  const { days, timeOfDay } = splitMicros(micros)
  const date = postgresDate(days)
  const { hms, fraction } = clock(timeOfDay)
  const [ymd, era = ''] = date.split(' ')
  return `${ymd} ${hms}.${fraction}+00${era ? ` ${era}` : ''}`
}

const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/
const TIMESTAMP_TEXT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/

/** Days of a `YYYY-MM-DD` text; undefined for anything else (a time of day included). */
export function parseDate(text: string): number | undefined {
  const m = DATE_TEXT.exec(text)
  if (!m) return undefined
  return validDays(Number(m[1]), Number(m[2]), Number(m[3]))
}

/**
 * Microseconds of an ISO 8601 text (`T` or space, optional seconds, fraction and zone, no zone
 * meaning UTC); a date alone is its midnight. Undefined when it is not one, or when it has a
 * non-zero digit below the microsecond, which no sink holds.
 */
export function parseTimestamp(text: string): bigint | undefined {
  const m = TIMESTAMP_TEXT.exec(text)
  if (!m) return undefined
  const days = validDays(Number(m[1]), Number(m[2]), Number(m[3]))
  if (days === undefined) return undefined
  const fraction = (m[7] ?? '').padEnd(9, '0')
  if (!fraction.endsWith('000')) return undefined
  const seconds = Number(m[4] ?? 0) * 3600 + Number(m[5] ?? 0) * 60 + Number(m[6] ?? 0)
  return (
    BigInt(days) * MICROS_PER_DAY +
    BigInt(seconds) * 1_000_000n +
    BigInt(fraction.slice(0, 6)) -
    zoneMicros(m[8])
  )
}

function zoneMicros(zone: string | undefined): bigint {
  if (zone === undefined || zone === 'Z') return 0n
  const sign = zone.startsWith('-') ? -1n : 1n
  const digits = zone.slice(1).replace(':', '')
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)
  return sign * BigInt(minutes) * 60_000_000n
}

function validDays(year: number, month: number, day: number): number | undefined {
  const days = daysFromCivil({ year, month, day })
  const back = civilFromDays(days)
  return back.year === year && back.month === month && back.day === day ? days : undefined
}
