import { describe, expect, it } from 'vitest'
import { decodePayload, PushDecodeError } from '../src/index.js'

const bytes = (text: string) => new TextEncoder().encode(text)
const lines = (body: Uint8Array) => new TextDecoder().decode(body)

describe('decodePayload', () => {
  it('keeps JSON lines as sent and types values by their text', () => {
    const decoded = decodePayload(
      bytes('{"id":1,"n":1.0}\r\n\n{"id":9007199254740993,"at":"2024-01-02"}\n'),
      'jsonl',
    )
    expect(decoded.rows).toBe(2)
    expect(lines(decoded.body)).toBe('{"id":1,"n":1.0}\n{"id":9007199254740993,"at":"2024-01-02"}\n')
    expect(decoded.fields).toEqual([
      { name: 'id', type: 'long' },
      { name: 'n', type: 'double' },
      { name: 'at', type: 'date' },
    ])
  })

  it('names the line and reason of a bad JSON line', () => {
    const decode = () => decodePayload(bytes('{"id":1}\n{"id":\n'), 'jsonl')
    expect(decode).toThrow(PushDecodeError)
    expect(decode).toThrow(/^line 2: /)
    expect(() => decodePayload(bytes('{"id":1}\n[1]\n'), 'jsonl')).toThrow('line 2: not a JSON object')
  })

  it('takes one JSON object or an array of them, one line per record', () => {
    expect(lines(decodePayload(bytes('{\n  "a": [1, {"b": ","}]\n}'), 'json').body)).toBe(
      '{   "a": [1, {"b": ","}] }\n',
    )
    const array = decodePayload(bytes(' [ {"a":"x,]"} , {"a":2.50} ] '), 'json')
    expect(array.rows).toBe(2)
    expect(lines(array.body)).toBe('{"a":"x,]"}\n{"a":2.50}\n')
    expect(decodePayload(bytes('[]'), 'json').rows).toBe(0)
    expect(() => decodePayload(bytes('[{"a":1}, 2]'), 'json')).toThrow('record 2: not a JSON object')
    expect(() => decodePayload(bytes('[{"a":1},'), 'json')).toThrow(/^record 1: /)
  })

  it('turns CSV with a header into typed JSON lines', () => {
    const decoded = decodePayload(bytes('id,name,zip\n1,"a ""b""",007\n2,,\n'), 'csv')
    expect(decoded.fields).toEqual([
      { name: 'id', type: 'int' },
      { name: 'name', type: 'string' },
      { name: 'zip', type: 'string' },
    ])
    expect(lines(decoded.body)).toBe(
      '{"id":1,"name":"a \\"b\\"","zip":"007"}\n{"id":2,"name":null,"zip":null}\n',
    )
    expect(() => decodePayload(bytes('id,name\n1\n'), 'csv')).toThrow(
      'line 2: 1 fields where the header has 2',
    )
    expect(() => decodePayload(bytes('id,id\n1,2\n'), 'csv')).toThrow("line 1: the header names 'id' twice")
  })

  it('holds a bytes payload as one base64 column', () => {
    const decoded = decodePayload(new Uint8Array([0, 255]), 'bytes')
    expect(lines(decoded.body)).toBe('{"payload":"AP8="}\n')
    expect(decoded.fields).toEqual([{ name: 'payload', type: 'string' }])
  })

  it('refuses bytes that are not UTF-8 text', () => {
    expect(() => decodePayload(new Uint8Array([0x7b, 0xff, 0x7d]), 'jsonl')).toThrow(PushDecodeError)
  })
})
