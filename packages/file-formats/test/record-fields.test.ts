/**
 * Splitting a part by its rows' values: each record's text of some fields, read by the scanners
 * Parquet uses, and a part cut down to some records with their bytes as committed.
 */
import { BAD_RECORD, type Field, hasCode } from '@skippr/connector-api'
import { describe, expect, it } from 'vitest'
import type { FilePart } from '../src/index.js'
import { fieldTexts, splitRecords } from '../src/index.js'

const fields: Field[] = [
  { name: 'id', type: 'long' },
  { name: 'country', type: 'string' },
  { name: 'amount', type: 'double' },
  { name: 'meta', type: 'json' },
]

function part(format: 'csv' | 'jsonl', body: string, rows: number): FilePart {
  const schema = { namespace: 't', fields }
  return { namespace: 't', schemaVersion: 1, format, rows, body: new TextEncoder().encode(body), schema }
}

const text = (p: FilePart) => new TextDecoder().decode(p.body)

describe('fieldTexts', () => {
  it('reads CSV fields as written: quoted text unquoted, an empty quoted field is "", an unquoted empty one NULL', () => {
    const csv = part('csv', '1,US,1.50,\n2,"a ""q"", b\nc",0,"{""k"":1}"\n3,,007,\n4,"",1e3,\n', 4)
    expect(fieldTexts(csv, ['country', 'amount'])).toEqual([
      ['US', '1.50'],
      ['a "q", b\nc', '0'],
      [null, '007'],
      ['', '1e3'],
    ])
  })

  it('reads a JSON string as its text and any other value as its source text; a missing key or null is NULL', () => {
    const jsonl = part(
      'jsonl',
      [
        '{"id":9223372036854775807,"country":"US","amount":1.50}',
        '',
        '{"country":"\\u00e9t\\u00e9","amount":1e3,"meta":{"k": [1, 2]}}',
        '{"id":3,"country":null}',
        '{"meta":true,"id":4}',
      ].join('\n'),
      4,
    )
    expect(fieldTexts(jsonl, ['id', 'country', 'meta'])).toEqual([
      ['9223372036854775807', 'US', null],
      [null, 'été', '{"k": [1, 2]}'],
      ['3', null, null],
      ['4', null, 'true'],
    ])
  })

  it('fails on a record that is not well-formed, as Parquet does', () => {
    expect(() => fieldTexts(part('jsonl', '{"id":1}\n[1]\n', 2), ['id'])).toThrow(
      expect.objectContaining({ code: BAD_RECORD, message: expect.stringContaining('row 2 of part 1') }),
    )
    let error: unknown
    try {
      fieldTexts(part('csv', '1,US\n', 1), ['country'])
    } catch (e) {
      error = e
    }
    expect(hasCode(error, BAD_RECORD)).toBe(true)
  })
})

describe('splitRecords', () => {
  it('keeps the records of every group, in order, byte for byte, and counts them', () => {
    const body =
      '{"id":9223372036854775807,"amount":1.10,"meta":{"a" : 1}}\n\n{"id":2}\r\n{"id":3,"country":"x"}'
    const jsonl = part('jsonl', body, 3)
    const [chosen, rest] = splitRecords(jsonl, [[0, 2], [1]])
    expect(chosen?.rows).toBe(2)
    expect(rest?.rows).toBe(1)
    expect(text(rest as FilePart)).toBe('{"id":2}\r\n')
    expect(text(chosen as FilePart)).toBe(
      '{"id":9223372036854775807,"amount":1.10,"meta":{"a" : 1}}\n{"id":3,"country":"x"}\n',
    )
    const csv = part('csv', '1,"multi\nline",,\n2,b,,\n3,c,,\n', 3)
    const [outer, inner] = splitRecords(csv, [[0, 2], [1]]) as FilePart[]
    expect(text(outer as FilePart)).toBe('1,"multi\nline",,\n3,c,,\n')
    expect(text(inner as FilePart)).toBe('2,b,,\n')
  })
})
