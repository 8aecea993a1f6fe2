import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countLines, csvValue, encodeCsv, encodeJsonl } from '../src/formats.js'
import { FIELD_TYPES, type Field } from '../src/schema.js'

const text8 = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

describe('encodeCsv', () => {
  it('orders columns by schema, quotes strings, leaves NULL empty and unquoted', () => {
    const fields = [
      { name: 'id', type: 'long' as const },
      { name: 'name', type: 'string' as const },
      { name: 'at', type: 'timestamp' as const },
    ]
    const rows = [
      { name: 'a "quoted", name', id: 1, at: new Date('2026-01-02T03:04:05.000Z') },
      { id: 2, name: '', at: null },
    ]
    expect(text8(encodeCsv(rows, fields))).toBe('1,"a ""quoted"", name",2026-01-02T03:04:05.000Z\n2,"",\n')
  })
  it('writes objects as JSON text', () => {
    expect(csvValue({ a: [1, 'x'] })).toBe('"{""a"":[1,""x""]}"')
  })
})

describe('encodeJsonl', () => {
  it('writes one object per line and counts them back', () => {
    const body = encodeJsonl([{ a: 1 }, { a: 'x\ny' }])
    expect(text8(body)).toBe('{"a":1}\n{"a":"x\\ny"}\n')
    expect(countLines(body)).toBe(2)
  })
})

describe('encodeCsv compiled per schema', () => {
  // One column of each type, so every declared type's inlined case meets every kind of value.
  const fields = FIELD_TYPES.map((type, i) => ({ name: i === 0 ? 'odd "name"' : type, type }))
  /** The reference: each value through csvValue, the joined text through TextEncoder. */
  const byValue = (rows: Record<string, unknown>[], schema: readonly Field[] = fields) =>
    new TextEncoder().encode(
      rows.map((row) => `${schema.map((f) => csvValue(row[f.name])).join(',')}\n`).join(''),
    )
  /** Both give the same bytes, or both throw the same kind of error. */
  const sameAsByValue = (rows: Record<string, unknown>[], schema: readonly Field[] = fields) => {
    let expected: Uint8Array
    try {
      expected = byValue(rows, schema)
    } catch (error) {
      expect(() => encodeCsv(rows, schema)).toThrow((error as Error).constructor as ErrorConstructor)
      return
    }
    const actual = encodeCsv(rows, schema)
    // The text for a readable difference, then the bytes: decoding hides how lone surrogates were written.
    expect(text8(actual)).toBe(text8(expected))
    expect(Buffer.compare(actual, expected)).toBe(0)
  }

  const DAY = 86_400_000
  /** The first instants of years 0 and 10000: toISOString writes 6-digit signed years outside them. */
  const YEAR_0 = Date.parse('0000-01-01T00:00:00Z')
  const YEAR_10000 = Date.parse('+010000-01-01T00:00:00Z')
  const utcDate = (year: number, month: number, day: number) =>
    new Date(new Date(0).setUTCFullYear(year, month, day))
  const date = fc.oneof(
    fc.date({ noInvalidDate: true }),
    // Around midnight on any day `Date` can hold, before and after the epoch.
    fc
      .tuple(
        fc.integer({ min: -100_000_000, max: 99_999_999 }),
        fc.constantFrom(0, 1, 999, 1000, DAY - 1000, DAY - 1),
      )
      .map(([day, ms]) => new Date(day * DAY + ms)),
    // Leap days and the days around them (Date moves Feb 29 of a common year to Mar 1).
    fc
      .tuple(
        fc.integer({ min: -300, max: 10_300 }),
        fc.integer({ min: 27, max: 30 }),
        fc.integer({ min: 0, max: DAY - 1 }),
      )
      .map(([year, day, ms]) => new Date(utcDate(year, 1, day).getTime() + ms)),
    fc
      .constantFrom(YEAR_0 - 1, YEAR_0, YEAR_10000 - 1, YEAR_10000, 0, -1, 8.64e15, -8.64e15)
      .map((ms) => new Date(ms)),
  )
  const number = fc.oneof(
    fc.double(),
    fc.integer(),
    fc.maxSafeInteger(),
    // Few decimals, as prices and distances have.
    fc.tuple(fc.maxSafeInteger(), fc.integer({ min: 0, max: 8 })).map(([n, places]) => n / 10 ** places),
    fc
      .tuple(fc.integer({ min: -100_000, max: 100_000 }), fc.integer({ min: 1, max: 7 }))
      .map(([n, places]) => n / 10 ** places),
    fc.constantFrom(
      -0,
      2 ** 31 - 1,
      2 ** 31,
      -(2 ** 31),
      1e15 - 1,
      1e15,
      -1e15 + 1,
      2 ** 53,
      1e21,
      1e-6,
      1e-7,
      5e-324,
      0.1 + 0.2,
      1.1 * 100,
      1234567.000001,
      99999999999.99998,
    ),
  )
  // Quotes, commas, newlines, multi-byte characters, surrogate pairs and lone surrogates.
  const text = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.constantFrom('"', 'a', ',', '\n', 'é', '€', '😀', '\ud800', '\udc00') }),
  )
  const value = fc.oneof(
    fc.constantFrom(null, undefined, true, false),
    number,
    fc.bigInt(),
    text,
    date,
    fc.jsonValue(),
    fc.dictionary(fc.string(), fc.oneof(text, date, number)),
  )
  const row = fc.record(Object.fromEntries(fields.map((f) => [f.name, value])), { requiredKeys: [] })

  it('writes exactly the bytes csvValue writes, whatever the values', () => {
    fc.assert(
      fc.property(fc.array(row), (rows) => sameAsByValue(rows)),
      { numRuns: 1000 },
    )
  })
  it('writes Dates exactly as toISOString does, near midnight, on leap days, at the year range edges', () => {
    const at = [{ name: 'at', type: 'timestamp' as const }]
    fc.assert(
      fc.property(fc.array(date, { maxLength: 50 }), (dates) => {
        const rows = dates.map((d) => ({ at: d }))
        expect(text8(encodeCsv(rows, at))).toBe(dates.map((d) => `${d.toISOString()}\n`).join(''))
      }),
      { numRuns: 1000 },
    )
  })
  it('throws for an invalid Date as toISOString does', () => {
    expect(() => encodeCsv([{ at: new Date(Number.NaN) }], [{ name: 'at', type: 'timestamp' }])).toThrow(
      RangeError,
    )
  })
  it('lets a Date subclass format itself', () => {
    class LocalDate extends Date {
      override toISOString(): string {
        return 'local'
      }
    }
    sameAsByValue([{ date: new LocalDate(0) }, { timestamp: new LocalDate(0) }])
  })
  it('grows for large values and many rows, and later calls start clean', () => {
    const long = `${'a"é'.repeat(100_000)}😀`
    sameAsByValue([{ string: long, json: { long } }, { string: 'short' }])
    const many = Array.from({ length: 100_000 }, (_, i) => ({
      int: i,
      double: i / 100,
      timestamp: new Date(i * 1e9),
      string: `row ${i}`,
    }))
    sameAsByValue(many)
    sameAsByValue([{ int: 1 }])
  })
  it('encodes rows inside a value that encodes rows itself', () => {
    const inner = [{ string: 'inner', int: 2 }]
    const nested = { toJSON: () => text8(encodeCsv(inner, fields)) }
    sameAsByValue([{ string: 'outer', json: nested, int: 1 }])
  })
  it('handles a schema without fields', () => {
    expect(text8(encodeCsv([{}, {}], []))).toBe('\n\n')
  })
})
