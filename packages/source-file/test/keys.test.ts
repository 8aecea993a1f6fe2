import { type Field, findKeys, KeyRanges } from '@skippr/connector-api'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { KeyWatch } from '../src/keys.js'

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

describe('findKeys values', () => {
  it('cuts out each top-level value as written, nested ones whole', () => {
    const line = '{"a": 9007199254740993 ,"b":{"x":[1,{"y":2}]},"c":"s, \\"q\\"}","d":-0.0}'
    const b = bytes(line)
    const out = new KeyRanges()
    findKeys(b, 0, b.length, out)
    expect([0, 1, 2, 3].map((k) => out.value(b, k))).toEqual([
      '9007199254740993',
      '{"x":[1,{"y":2}]}',
      '"s, \\"q\\"}"',
      '-0.0',
    ])
  })

  it('matches JSON.parse on any object (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const line = JSON.stringify(record, null, 1).replaceAll('\n', '')
        const b = bytes(line)
        const out = new KeyRanges()
        findKeys(b, 0, b.length, out)
        const values = Array.from({ length: out.count }, (_, k) => JSON.parse(out.value(b, k)) as unknown)
        expect(values).toEqual(Object.values(JSON.parse(line) as object))
      }),
      { numRuns: runs },
    )
  })
})

describe('KeyWatch', () => {
  const watching = (fields: Field[]) => {
    const watch = new KeyWatch()
    watch.follow(fields)
    return watch
  }

  it('reports where each record that brings a new key starts, once, and learns its keys', () => {
    const watch = watching([{ name: 'id', type: 'string' }])
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
    expect(watch.scan(body).recordsWithNewKeys).toEqual([text.indexOf('{"id":3'), text.indexOf('{"id":6')])
    expect(watch.scan(bytes('{"id":8,"score":1,"name":"z"}\n')).recordsWithNewKeys).toEqual([])
    expect(watch.scan(bytes('\n{"id":9,"extra":{"deep":1}}\n')).recordsWithNewKeys).toEqual([1])
  })

  it('widens a column whose value does not fit its type, once, and checks the wider type from then on', () => {
    const watch = watching([
      { name: 'n', type: 'int' },
      { name: 'day', type: 'date' },
      { name: 'note', type: 'string' },
    ])
    const fitting = '{"n":1,"day":"2020-01-01","note":1.5}\n{"n":null,"day":null,"note":"2020-01-01 10:30"}\n'
    expect(watch.scan(bytes(fitting))).toEqual({ recordsWithNewKeys: [], widened: [], misfits: [] })
    const late = '{"n":2,"day":"2020-01-02 10:30:00","note":"x"}\n{"n":1.5,"day":"2020-01-03"}\n{"n":2.5}\n'
    expect(watch.scan(bytes(late)).widened).toEqual([
      { name: 'day', type: 'timestamp' },
      { name: 'n', type: 'double' },
    ])
    expect(watch.scan(bytes('{"n":3.5,"day":"2020-01-04T00:00:00Z"}\n')).widened).toEqual([])
    expect(watch.scan(bytes('{"n":"x"}\n')).widened).toEqual([{ name: 'n', type: 'string' }])
  })

  it('without widening, reports the first misfit of every record, and passes over skipped lines', () => {
    const watch = new KeyWatch(false)
    watch.follow([
      { name: 'n', type: 'int' },
      { name: 'day', type: 'date' },
    ])
    const lines = ['{"n":1.5,"day":"2020-01-02 10:30"}', '{"n":2.5}', '{"n":"x"}', '{"n":1}', '']
    const body = lines.join('\n')
    const starts = [0, lines[0]!.length + 1, lines[0]!.length + lines[1]!.length + 2]
    const found = watch.scan(bytes(body))
    expect(found.widened).toEqual([])
    expect(found.misfits).toEqual([
      { at: starts[0], column: { name: 'n', type: 'int' }, value: '1.5', wider: 'double' },
      { at: starts[1], column: { name: 'n', type: 'int' }, value: '2.5', wider: 'double' },
      { at: starts[2], column: { name: 'n', type: 'int' }, value: '"x"', wider: 'string' },
    ])
    expect(watch.scan(bytes(body), [starts[1]!, starts[2]!]).misfits.map((m) => m.at)).toEqual([
      starts[0],
      starts[2],
    ])
  })

  it('learns nothing from a copy: a copy keeps the keys known when it was made', () => {
    const watch = watching([{ name: 'id', type: 'int' }])
    const copy = watch.copy()
    expect(watch.scan(bytes('{"id":1,"z":2}\n')).recordsWithNewKeys).toEqual([0])
    expect(copy.scan(bytes('{"id":1,"z":2}\n')).recordsWithNewKeys).toEqual([0])
    expect(watch.scan(bytes('{"id":1,"z":2}\n')).recordsWithNewKeys).toEqual([])
  })

  it('widens an int to a long, a long beyond 2^63 to a string, judging the digits', () => {
    const watch = watching([
      { name: 'a', type: 'int' },
      { name: 'b', type: 'long' },
    ])
    expect(watch.scan(bytes('{"a":2147483647,"b":9223372036854775807}\n')).widened).toEqual([])
    expect(watch.scan(bytes('{"a":2147483648,"b":9223372036854775808}\n')).widened).toEqual([
      { name: 'a', type: 'long' },
      { name: 'b', type: 'string' },
    ])
  })
})
