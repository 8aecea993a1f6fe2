import { describe, expect, it } from 'vitest'
import { countLines, csvValue, encodeCsv, encodeJsonl } from '../src/formats.js'

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

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
    expect(text(encodeCsv(rows, fields))).toBe('1,"a ""quoted"", name",2026-01-02T03:04:05.000Z\n2,"",\n')
  })
  it('writes objects as JSON text', () => {
    expect(csvValue({ a: [1, 'x'] })).toBe('"{""a"":[1,""x""]}"')
  })
})

describe('encodeJsonl', () => {
  it('writes one object per line and counts them back', () => {
    const body = encodeJsonl([{ a: 1 }, { a: 'x\ny' }])
    expect(text(body)).toBe('{"a":1}\n{"a":"x\\ny"}\n')
    expect(countLines(body)).toBe(2)
  })
})
