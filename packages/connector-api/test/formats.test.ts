import fc from 'fast-check'
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

describe('encodeCsv compiled per schema', () => {
  const fields = [
    { name: 'n', type: 'long' as const },
    { name: 'odd "name"', type: 'string' as const },
    { name: 'j', type: 'json' as const },
    { name: 'b', type: 'boolean' as const },
  ]
  const byValue = (rows: Record<string, unknown>[]) =>
    rows.map((row) => `${fields.map((f) => csvValue(row[f.name])).join(',')}\n`).join('')

  it('writes exactly what csvValue writes, whatever the values', () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.constant(undefined),
      fc.double(),
      fc.integer(),
      fc.string(),
      fc.boolean(),
      fc.date({ noInvalidDate: true }),
      fc.dictionary(fc.string(), fc.string()),
    )
    const row = fc.record({ n: value, 'odd "name"': value, j: value, b: value })
    fc.assert(
      fc.property(fc.array(row), (rows) => {
        expect(text(encodeCsv(rows, fields))).toBe(byValue(rows))
      }),
    )
  })
  it('handles a schema without fields', () => {
    expect(text(encodeCsv([{}, {}], []))).toBe('\n\n')
  })
})
