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
