import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { findKeys, KeyRanges, KeyWatch } from '../src/keys.js'

const bytes = (text: string) => new TextEncoder().encode(text)
const runs = Number(process.env.SKIPPR_PROPERTY_RUNS ?? 200)

/** The raw text of each top-level key of one JSON object line. */
function keysOf(line: string): string[] {
  const b = bytes(line)
  const out = new KeyRanges()
  findKeys(b, 0, b.length, out)
  const keys: string[] = []
  for (let k = 0; k < out.count; k++)
    keys.push(new TextDecoder().decode(b.subarray(out.starts[k], out.ends[k])))
  return keys
}

describe('findKeys', () => {
  it('finds the top-level keys only, past nested objects, arrays, strings with quotes and commas', () => {
    const line =
      ' { "a" : 1, "b":{"x":{"y":2},"z":[3,{"w":4}]}, "c":"say \\"d\\": 5, e", "f":[1,2] ,"g\\"h":null}'
    expect(keysOf(line)).toEqual(['a', 'b', 'c', 'f', 'g\\"h'])
  })

  it('matches JSON.parse on any object (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const line = JSON.stringify(record)
        const decoded = keysOf(line).map((raw) => JSON.parse(`"${raw}"`) as string)
        expect(decoded).toEqual(Object.keys(JSON.parse(line) as object))
      }),
      { numRuns: runs },
    )
  })
})

describe('KeyWatch', () => {
  it('reports where each record that brings a new key starts, once, and learns its keys', () => {
    const watch = new KeyWatch(['id'])
    const body = bytes(
      [
        '{"id":1}',
        '{"id":2}',
        '{"id":3,"score":1.5}',
        '{"id":4,"score":2}',
        '{"score":3,"id":5}',
        '{"id":6,"n\\u0061me":"x"}',
        '{"id":7,"name":"y"}',
        '',
      ].join('\n'),
    )
    const text = new TextDecoder().decode(body)
    expect(watch.recordsWithNewKeys(body)).toEqual([text.indexOf('{"id":3'), text.indexOf('{"id":6')])
    expect(watch.recordsWithNewKeys(bytes('{"id":8,"score":1,"name":"z"}\n'))).toEqual([])
    expect(watch.recordsWithNewKeys(bytes('\n{"id":9,"extra":{"deep":1}}\n'))).toEqual([1])
  })
})
