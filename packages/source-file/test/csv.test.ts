import { describe, expect, it } from 'vitest'
import { parseCsv, reencodeRecord } from '../src/csv.js'

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

  it('reads a quote inside an unquoted field as a character, as the scan does', () => {
    expect(fields(`37°36'37.8"N,1,a"b,c"d,3\n`)).toEqual([[`37°36'37.8"N`, '1', 'a"b', 'c"d', '3']])
  })

  it('returns only complete records, at most `limit`', () => {
    expect(fields('a\nb\n"c\n')).toEqual([['a'], ['b']])
    expect(fields('a\nb')).toEqual([['a']])
    expect(parseCsv('a\nb\nc\n', 2)).toHaveLength(2)
  })
})

describe('reencodeRecord', () => {
  it('quotes every text field and doubles its quotes, keeping quoted fields and NULLs as they are', () => {
    const record = new TextEncoder().encode('a"b,,"c,""d""",e\r\n')
    expect(new TextDecoder().decode(reencodeRecord(record))).toBe('"a""b",,"c,""d""","e"\n')
  })

  it('changes no byte of a value: a leading U+FEFF and invalid UTF-8 stay', () => {
    const record = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x22, 0xff]), Buffer.from(',x\n')])
    const expected = Buffer.concat([
      Buffer.from('"'),
      Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x22, 0x22, 0xff]),
      Buffer.from('","x"\n'),
    ])
    expect(Buffer.from(reencodeRecord(record))).toEqual(expected)
  })
})
