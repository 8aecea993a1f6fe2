import { describe, expect, it } from 'vitest'
import { parseCsv } from '../src/csv.js'

const fields = (text: string) => parseCsv(text, Number.POSITIVE_INFINITY).map((r) => r.fields)

describe('parseCsv', () => {
  it('parses plain and quoted fields; an unquoted empty field is null, a quoted one empty', () => {
    expect(fields('a,,"",b c\n')).toEqual([['a', null, '', 'b c']])
  })

  it('unescapes doubled quotes and keeps commas and newlines in quoted fields', () => {
    expect(fields('"say ""hi""","1,2","x\ny"\n')).toEqual([['say "hi"', '1,2', 'x\ny']])
  })

  it('accepts CRLF, skips blank lines, and reports where each record ends', () => {
    const text = 'a,b\r\n\r\nc,"d\r\n"\r\n'
    expect(parseCsv(text, 10)).toEqual([
      { fields: ['a', 'b'], end: 5 },
      { fields: ['c', 'd\r\n'], end: text.length },
    ])
  })

  it('returns only complete records, at most `limit`', () => {
    expect(fields('a\nb\n"c\n')).toEqual([['a'], ['b']])
    expect(fields('a\nb')).toEqual([['a']])
    expect(parseCsv('a\nb\nc\n', 2)).toHaveLength(2)
  })
})
