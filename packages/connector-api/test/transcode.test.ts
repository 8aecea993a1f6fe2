import { describe, expect, it } from 'vitest'
import { BAD_RECORD, hasCode } from '../src/errors.js'
import { csvHeader, transcode } from '../src/transcode.js'

const fields = [
  { name: 'id', type: 'long' as const },
  { name: 'name', type: 'string' as const },
  { name: 'tags', type: 'json' as const },
]
const schema = { namespace: 'n', fields }
const bytes = (text: string) => new TextEncoder().encode(text)
const text = (body: Uint8Array) => new TextDecoder().decode(body)
const part = (format: 'csv' | 'jsonl', body: string) => ({
  namespace: 'n',
  schemaVersion: 1,
  format,
  rows: 1,
  body: bytes(body),
  schema,
})

describe('transcode', () => {
  it('passes a part already in the wanted format through as the same bytes', () => {
    const csv = part('csv', '1,"a",\n')
    expect(transcode(csv, 'csv', fields)).toBe(csv.body)
  })
  it('turns CSV into typed JSON lines', () => {
    expect(text(transcode(part('csv', '1,"a ""b""","[1]"\n2,,\n'), 'jsonl', fields))).toBe(
      '{"id":1,"name":"a \\"b\\"","tags":[1]}\n{"id":2,"name":null,"tags":null}\n',
    )
  })
  it('turns JSON lines into CSV in the header order', () => {
    const header = [fields[1]!, fields[0]!]
    expect(text(transcode(part('jsonl', '{"id":7,"name":"x,y"}\n'), 'csv', header))).toBe('"x,y",7\n')
    expect(text(csvHeader(header))).toBe('"name","id"\n')
  })
  it('rejects a value that does not fit its type with a bad-record error', () => {
    try {
      transcode(part('csv', 'abc,"a",\n'), 'jsonl', fields)
      expect.unreachable()
    } catch (error) {
      expect(hasCode(error, BAD_RECORD)).toBe(true)
    }
  })
})
