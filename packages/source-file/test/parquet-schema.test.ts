import { DuckDBInstance } from '@duckdb/node-api'
import type { FileMetaData } from 'hyparquet'
import { describe, expect, it } from 'vitest'
import { decimalText, parquetColumns, parsers } from '../src/parquet-schema.js'

describe('decimalText', () => {
  it('writes an unscaled decimal exactly, whatever its storage', () => {
    expect(decimalText(-5, 2)).toBe('-0.05')
    expect(decimalText(12345, 2)).toBe('123.45')
    expect(decimalText(7, 0)).toBe('7')
    expect(decimalText(-123456789012345678901234567890n, 5)).toBe('-1234567890123456789012345.67890')
    // Big-endian two's complement, as FIXED_LEN_BYTE_ARRAY holds it: 0xFF85 is -123.
    expect(decimalText(new Uint8Array([0xff, 0x85]), 1)).toBe('-12.3')
    expect(decimalText(new Uint8Array([0x00, 0x85]), 1)).toBe('13.3')
    expect(decimalText(null, 2)).toBeNull()
  })
})

describe('timestamps and dates', () => {
  it('keep microseconds, before and after 1970, and cut nanoseconds toward the past', () => {
    expect(parsers.timestampFromMicroseconds?.(1n)).toBe('1970-01-01T00:00:00.000001Z')
    expect(parsers.timestampFromMicroseconds?.(-1n)).toBe('1969-12-31T23:59:59.999999Z')
    expect(parsers.timestampFromMilliseconds?.(-1n)).toBe('1969-12-31T23:59:59.999000Z')
    expect(parsers.timestampFromNanoseconds?.(1_999n)).toBe('1970-01-01T00:00:00.000001Z')
    expect(parsers.timestampFromNanoseconds?.(-1n)).toBe('1969-12-31T23:59:59.999999Z')
    expect(parsers.dateFromDays?.(-1)).toBe('1969-12-31')
    expect(parsers.dateFromDays?.(19_782)).toBe('2024-02-29')
  })
})

describe('dates and timestamps across the calendar', () => {
  it('match Date for every day from year 1 to 9999 and around the edges of months', () => {
    for (let days = -719_162; days <= 2_932_896; days += 97) {
      const expected = new Date(days * 86_400_000).toISOString()
      expect(parsers.dateFromDays?.(days)).toBe(expected.slice(0, 10))
      const micros = BigInt(days) * 86_400_000_000n + 45_296_789_012n
      expect(parsers.timestampFromMicroseconds?.(micros)).toBe(
        `${new Date(Number((micros - 12n) / 1000n)).toISOString().slice(0, -1)}012Z`,
      )
    }
  })
})

describe('dates and timestamps outside years 1 to 9999', () => {
  it("write the contract's forms: all the year's digits past 9999, the BC year before 1 AD", () => {
    expect(parsers.dateFromDays?.(-719_162)).toBe('0001-01-01')
    expect(parsers.dateFromDays?.(-719_163)).toBe('0001-12-31 (BC)')
    expect(parsers.dateFromDays?.(-735_233)).toBe('0044-01-01 (BC)')
    expect(parsers.dateFromDays?.(2_932_897)).toBe('10000-01-01')
    expect(parsers.timestampFromMicroseconds?.(-62_135_596_800_000_001n)).toBe(
      '0001-12-31 (BC) 23:59:59.999999Z',
    )
    expect(parsers.timestampFromMicroseconds?.(253_402_300_800_000_000n)).toBe('10000-01-01T00:00:00.000000Z')
    // The extremes of each unit short of DuckDB's infinity.
    expect(parsers.timestampFromMilliseconds?.(9_223_372_036_854_775_806n)).toBe(
      '292278994-08-17T07:12:55.806000Z',
    )
    expect(parsers.timestampFromNanoseconds?.(-9_223_372_036_854_775_806n)).toBe(
      '1677-09-21T00:12:43.145224Z',
    )
    expect(parsers.dateFromDays?.(-2_147_483_648)).toBe('5877642-06-23 (BC)')
  })

  it("read DuckDB's infinity (the type's largest value, negated for −infinity) as infinity", () => {
    const ticks = 9_223_372_036_854_775_807n
    for (const parse of [
      parsers.timestampFromMilliseconds,
      parsers.timestampFromMicroseconds,
      parsers.timestampFromNanoseconds,
    ]) {
      expect(parse?.(ticks)).toBe('infinity')
      expect(parse?.(-ticks)).toBe('-infinity')
    }
    expect(parsers.dateFromDays?.(2_147_483_647)).toBe('infinity')
    expect(parsers.dateFromDays?.(-2_147_483_647)).toBe('-infinity')
  })

  it('are read back by DuckDB as the same day and microsecond, across all it holds', async () => {
    const duck = await (await DuckDBInstance.create(':memory:')).connect()
    try {
      const steps = 2_000
      const days = Array.from({ length: steps + 1 }, (_, i) =>
        Math.round(-2_147_483_000 + (i * 4_294_966_000) / steps),
      )
      const micros = Array.from(
        { length: steps + 1 },
        (_, i) => -9_200_000_000_000_000_000n + BigInt(i) * 9_200_000_000_000_013n,
      )
      const dates = days.map((d) => `(${d}, '${parsers.dateFromDays?.(d)}')`).join(', ')
      const timestamps = micros.map((m) => `(${m}, '${parsers.timestampFromMicroseconds?.(m)}')`).join(', ')
      const differing = await duck.runAndReadAll(
        `SELECT d::VARCHAR, t FROM (VALUES ${dates}) v(d, t) WHERE t::DATE - DATE '1970-01-01' <> d
         UNION ALL
         SELECT m::VARCHAR, t FROM (VALUES ${timestamps}) v(m, t) WHERE epoch_us(t::TIMESTAMPTZ) <> m`,
      )
      expect(differing.getRowsJS()).toEqual([])
    } finally {
      duck.closeSync()
    }
  })
})

describe('parquetColumns', () => {
  const file = (columns: FileMetaData['schema']): FileMetaData => ({
    version: 2,
    schema: [{ name: 'schema', num_children: columns.length }, ...columns],
    num_rows: 0n,
    row_groups: [],
    metadata_length: 0,
  })

  it('reads an enum symbol as text and plain binary as base64', () => {
    const [symbol, blob] = parquetColumns(
      'f.parquet',
      file([
        { name: 'mood', type: 'BYTE_ARRAY', converted_type: 'ENUM' },
        { name: 'blob', type: 'BYTE_ARRAY' },
      ]),
    )
    expect(symbol?.field).toEqual({ name: 'mood', type: 'string', nullable: true })
    expect(symbol?.cell(new TextEncoder().encode('happy'))).toBe('happy')
    expect(blob?.cell(new Uint8Array([0, 255]))).toBe('AP8=')
  })

  it('refuses INTERVAL, BSON and decimals stored as BYTE_ARRAY, naming the column', () => {
    for (const [column, type] of [
      [{ name: 'span', type: 'FIXED_LEN_BYTE_ARRAY', converted_type: 'INTERVAL' }, 'INTERVAL'],
      [{ name: 'doc', type: 'BYTE_ARRAY', converted_type: 'BSON' }, 'BSON'],
      [{ name: 'big', type: 'BYTE_ARRAY', converted_type: 'DECIMAL', precision: 40, scale: 2 }, 'DECIMAL'],
    ] as const) {
      expect(() => parquetColumns('f.parquet', file([column]))).toThrow(
        `f.parquet: column ${column.name} is ${type}`,
      )
    }
  })
})
