import { describe, expect, it } from 'vitest'
import { csvField, parseCsv } from '../src/csv.js'

describe('parseCsv', () => {
  it('tells NULL (unquoted empty) from the empty string, and keeps quoted commas, quotes and newlines', () => {
    expect(parseCsv('1,,""\n"a,""b""\nc",x,\n')).toEqual([
      ['1', null, ''],
      ['a,"b"\nc', 'x', null],
    ])
  })
  it('keeps LF and CRLF inside quoted fields', () => {
    expect(parseCsv('"x\ny\r\nz",1\r\n')).toEqual([['x\ny\r\nz', '1']])
  })
  it('accepts CRLF line ends and a last record without a newline', () => {
    expect(parseCsv('a,b\r\nc,d')).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ])
  })
  it('refuses an unterminated quoted field', () => {
    expect(() => parseCsv('"abc\n')).toThrow('unterminated quoted field')
  })
})

describe('csvField', () => {
  it('quotes text, leaves bare values and NULL alone', () => {
    expect(csvField('say "hi"', false)).toBe('"say ""hi"""')
    expect(csvField('42', true)).toBe('42')
    expect(csvField(null, false)).toBe('')
  })
})
