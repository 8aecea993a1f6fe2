import { describe, expect, it } from 'vitest'
import { encodeCsv, encodeJsonl } from '../src/formats.js'
import { countRecords, recordRanges, withoutRecords } from '../src/records.js'

const bytes = (text: string) => new TextEncoder().encode(text)

describe('countRecords', () => {
  it('counts CSV records, newlines inside quotes being data', () => {
    expect(countRecords(bytes(''), 'csv')).toBe(0)
    expect(countRecords(bytes('1,"a\nb"\n2,"c ""quoted""\r\nd"\r\n'), 'csv')).toBe(2)
    expect(countRecords(bytes('"\n"\n"\n\n"\n'), 'csv')).toBe(2)
    // One NULL column: an empty line is a record.
    expect(countRecords(bytes('a\n\nb\n'), 'csv')).toBe(3)
    expect(countRecords(bytes('a\nb'), 'csv')).toBe(2)
    expect(countRecords(bytes('a\n"open\nnever closed\n'), 'csv')).toBe(2)
    const fields = [{ name: 'v', type: 'string' as const }]
    const rows = ['x', '', null, 'multi\nline', '"', '\\.'].map((v) => ({ v }))
    expect(countRecords(encodeCsv(rows, fields), 'csv')).toBe(rows.length)
  })

  it('counts JSON lines, blank lines not being records', () => {
    expect(countRecords(bytes(''), 'jsonl')).toBe(0)
    expect(countRecords(bytes('{"a":1}\n\n  \r\n{"a":"x\\ny"}\n{"a":3}'), 'jsonl')).toBe(3)
    expect(countRecords(encodeJsonl([{ a: 'line\nbreak' }, {}]), 'jsonl')).toBe(2)
  })
})

describe('countRecords over words and their edges', () => {
  it('counts the same wherever the body starts and ends against 4-byte words', () => {
    const text = '1,"a\nb",x\n2,"c""\n"\n\n3,d'
    const padded = bytes(`###${text}###`)
    for (let start = 0; start < 4; start++)
      for (let cut = 0; cut < 4; cut++) {
        const body = padded.subarray(start, 3 + text.length - cut)
        const reference = new TextDecoder().decode(body)
        expect(countRecords(body, 'csv'), JSON.stringify(reference)).toBe(referenceCount(reference))
      }
  })
})

/** The rule, a character at a time. */
function referenceCount(text: string): number {
  let records = 0
  let inside = false
  for (const c of text) {
    if (c === '"') inside = !inside
    else if (c === '\n' && !inside) records++
  }
  return text.length > 0 && (inside || !text.endsWith('\n')) ? records + 1 : records
}

describe('recordRanges and withoutRecords: naming records as countRecords counts them', () => {
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
  const ranges = (body: string, format: 'csv' | 'jsonl') => {
    const bytes = new TextEncoder().encode(body)
    return recordRanges(bytes, format).map(([start, end]) => text(bytes.subarray(start, end)))
  }

  it('CSV: a quoted newline stays inside its record; an empty line is a record', () => {
    const body = 'a,"x\ny"\n\nb,2\nc,"q""\n"\n'
    expect(ranges(body, 'csv')).toEqual(['a,"x\ny"', '', 'b,2', 'c,"q""\n"'])
    expect(ranges(body, 'csv')).toHaveLength(countRecords(new TextEncoder().encode(body), 'csv'))
  })

  it('JSON lines: blank lines are not records; a last line without its newline is', () => {
    const body = '{"a":1}\n \n{"a":"\\n"}\r\n{"a":3}'
    expect(ranges(body, 'jsonl')).toEqual(['{"a":1}', '{"a":"\\n"}\r', '{"a":3}'])
  })

  it('removes the named records and gives their bytes, keeping the rest byte for byte', () => {
    const body = new TextEncoder().encode('1,a\n2,"b\nc"\n3,c\n4,d\n')
    const { body: rest, removed } = withoutRecords(body, 'csv', new Set([1, 3]))
    expect(text(rest)).toBe('1,a\n3,c\n')
    expect(removed.map(text)).toEqual(['2,"b\nc"', '4,d'])
    const jsonl = new TextEncoder().encode('{"a":1}\n\n{"a":2}\n{"a":3}\n')
    expect(text(withoutRecords(jsonl, 'jsonl', new Set([0])).body)).toBe('\n{"a":2}\n{"a":3}\n')
  })
})
