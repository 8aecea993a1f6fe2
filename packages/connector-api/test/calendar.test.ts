import { describe, expect, it } from 'vitest'
import { civilFromDays, dateText, timestampText } from '../src/calendar.js'

const DAY_US = 86_400_000_000n

describe('the contract text of dates and timestamps', () => {
  it.each([
    [0, '1970-01-01'],
    [-1, '1969-12-31'],
    [11_016, '2000-02-29'],
    [-719_162, '0001-01-01'],
    [-719_163, '0001-12-31 (BC)'], // year 0 is 1 BC
    [-735_160, '0044-03-15 (BC)'],
    [2_932_896, '9999-12-31'],
    [2_932_897, '10000-01-01'],
  ])('day %i is %s', (days, text) => {
    expect(dateText(days)).toBe(text)
  })

  it('writes a timestamp to the microsecond in UTC, after a space when the date is BC', () => {
    expect(timestampText(0n)).toBe('1970-01-01T00:00:00.000000Z')
    expect(timestampText(-1n)).toBe('1969-12-31T23:59:59.999999Z')
    expect(timestampText(-735_160n * DAY_US + 36_000_000_000n)).toBe('0044-03-15 (BC) 10:00:00.000000Z')
    // Beyond Number's exact range: bigint arithmetic.
    expect(timestampText(9_000_000_000_000_000_000n)).toBe('287168-08-24T16:00:00.000000Z') // PostgreSQL: to_timestamp(9e12)
  })

  it('agrees with Date on every day it can hold', () => {
    for (let days = -800_000; days <= 3_000_000; days += 997) {
      const date = new Date(days * 86_400_000)
      expect(civilFromDays(days)).toEqual({
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
        day: date.getUTCDate(),
      })
    }
  })
})
