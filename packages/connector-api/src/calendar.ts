/**
 * Days since 1970-01-01 in the proleptic Gregorian calendar (as ISO 8601 and `Date` have it), and
 * the contract's text of a date (batch.ts). Years are astronomical here: year 0 is 1 BC.
 */

export interface CivilDate {
  readonly year: number
  readonly month: number
  readonly day: number
}

/** Days from 0000-03-01 to 1970-01-01. */
const DAYS_0000_03_01_TO_EPOCH = 719_468
const DAYS_PER_400_YEARS = 146_097

/**
 * The civil date of a day, for any year: counting years from March, so the leap day ends each year
 * (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", civil_from_days).
 */
export function civilFromDays(days: number): CivilDate {
  const shifted = days + DAYS_0000_03_01_TO_EPOCH
  const era = Math.floor(shifted / DAYS_PER_400_YEARS)
  const dayOfEra = shifted - era * DAYS_PER_400_YEARS
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
  return { year: era * 400 + yearOfEra + (month <= 2 ? 1 : 0), month, day }
}

/**
 * The contract's text of a day: `YYYY-MM-DD`, a year past 9999 in as many digits as it needs, and a
 * year before 1 AD as its BC year followed by ` (BC)` (`0044-03-15 (BC)`).
 */
export function dateText(days: number): string {
  const { year, month, day } = civilFromDays(days)
  const monthDay = `-${pad(month)}-${pad(day)}`
  return year >= 1 ? `${pad(year, 4)}${monthDay}` : `${pad(1 - year, 4)}${monthDay} (BC)`
}

/**
 * The contract's text of an instant, in microseconds since 1970-01-01 UTC: the date as `dateText`
 * writes it, then the time to the microsecond in UTC, after `T` (after a space when the date ends
 * in ` (BC)`): `2024-01-01T00:05:43.000000Z`, `0044-03-15 (BC) 10:00:00.000000Z`.
 */
export function timestampText(micros: bigint): string {
  // Number arithmetic while it is exact (±285 years around 1970); bigint division for the rest.
  let days: number
  let inDay: number
  if (micros < -MAX_EXACT_MICROS || micros > MAX_EXACT_MICROS) {
    const floored = micros / BIG_MICROS_PER_DAY - (micros % BIG_MICROS_PER_DAY < 0n ? 1n : 0n)
    days = Number(floored)
    inDay = Number(micros - floored * BIG_MICROS_PER_DAY)
  } else {
    const us = Number(micros)
    days = Math.floor(us / MICROS_PER_DAY)
    inDay = us - days * MICROS_PER_DAY
  }
  const seconds = Math.floor(inDay / 1e6)
  const time = `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}`
  const separator = days < FIRST_AD_DAY ? ' ' : 'T'
  return `${dateText(days)}${separator}${time}.${pad(inDay - seconds * 1e6, 6)}Z`
}

const MAX_EXACT_MICROS = BigInt(Number.MAX_SAFE_INTEGER)
const MICROS_PER_DAY = 86_400_000_000
const BIG_MICROS_PER_DAY = BigInt(MICROS_PER_DAY)
/** 0001-01-01, in days since 1970-01-01. */
const FIRST_AD_DAY = -719_162

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0')
}
