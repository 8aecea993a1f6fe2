import type { NamespaceSchema } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import { columnTypeOf } from '../src/column-types.js'
import { VALUE_REFUSED } from '../src/errors.js'
import { encodeJsonBody } from '../src/json-body.js'
import { JsonLine } from '../src/json-line.js'
import { type Part, readRecords } from '../src/part-records.js'
import { encodedString, RowBinaryWriter, type TargetColumn } from '../src/row-binary.js'
import { valueProblem } from '../src/value-problem.js'

const schema: NamespaceSchema = {
  namespace: 'mixed',
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'long' },
    { name: 'n', type: 'int' },
    { name: 'd', type: 'double' },
    { name: 's', type: 'string' },
    { name: 'ok', type: 'boolean' },
    { name: 'doc', type: 'json' },
    { name: 'é', type: 'string' },
  ],
}
const targets: TargetColumn[] = schema.fields.map((f) => ({
  name: f.name,
  type: columnTypeOf(f.type),
  nullable: f.name !== 'id',
  field: f.type,
}))
const key = encodedString('p/1/000000000001/0')
const partOf = (body: string, rows: number): Part => ({
  namespace: 'mixed',
  schemaVersion: 1,
  format: 'jsonl',
  body: Buffer.from(body),
  rows,
  schema,
})

/** The general path's encoding: part-records.ts's cells, every value written from its text. */
function fromStrings(part: Part) {
  const writer = new RowBinaryWriter()
  const refused: { row: number; error: string; code: string }[] = []
  readRecords(part).forEach((record, row) => {
    if (!('cells' in record)) throw new Error(record.problem)
    let problem: string | undefined
    targets.forEach((target, i) => {
      const cell = record.cells[i] ?? null
      const reason = writer.value(target, cell)
      problem ??= reason && valueProblem(target, cell, reason)
    })
    if (problem) refused.push({ row, error: problem, code: VALUE_REFUSED })
    writer.encoded(key)
  })
  return { body: Buffer.from(writer.bytes()), refused }
}

const lines = [
  '{"id":1,"n":2,"d":3.47,"s":"plain","ok":true,"doc":{"a":[1,"x"]},"é":"ü"}',
  ' { "s" : "esc \\"q\\" \\n \\t \\\\ \\/ \\u00e9 \\ud83d\\ude00" , "id" : -0 , "d" : -0 , "doc" : "a\\nb" } \r',
  '{"id":2,"id":3,"n":"12","d":"0.1","s":12345678901234567890,"ok":"false","doc":null,"\\u00e9":"by escape"}',
  '{"\\u0069d":4,"s":"lone \\ud800","n":1e5,"d":1E-7,"doc":[1, {"b": null}],"é":null}',
  '{"id":5,"s":{"nested":[true,false,null]},"d":5e-324,"ok":null,"doc":"\\u0000"}',
  '{"id":12345678901234567,"n":2147483648,"d":1e309,"s":"\ufeffBOM inside","ok":1,"doc":-1.5e+3}',
  '{"id":6,"n":-12,"d":123456789012345.6,"s":"","doc":true}',
  '{}',
  '{"id":7,"unknown":{"deep":[[[]]]},"d":0.30000000000000004}',
]

it('encodes a JSON-lines body from its bytes exactly as from the strings the general path reads', () => {
  const bodies = [`\ufeff${lines.join('\n')}\n`, lines.join('\n\n  \t\n'), lines.join('\r\n')]
  for (const text of bodies) {
    const part = partOf(text, lines.length)
    const encoded = encodeJsonBody(part, targets, key)
    expect(encoded).toBeDefined()
    const expected = fromStrings(part)
    expect(encoded?.refused).toEqual(expected.refused)
    expect(encoded?.rows).toBe(lines.length)
    expect(Buffer.from(encoded?.body ?? [])).toEqual(expected.body)
  }
})

it('reads a line as a JSON object exactly when JSON.parse makes one of it', () => {
  const texts = [...lines, '[1]', '1', '"s"', 'null', '{', '{"a":1,}', '{"a":01}', '{"a":-}', '{"a":1.}']
  texts.push(
    '{"a":.5}',
    '{"a":1e}',
    '{"a":+1}',
    '{"a":tru}',
    '{"a":nul}',
    '{"a" 1}',
    '{"a":1}x',
    '{"a":1 "b":2}',
  )
  texts.push(
    '{"a":"\\x"}',
    '{"a":"\\u12"}',
    '{"a":"\\u12g4"}',
    '{"a":"tab\there"}',
    '{a:1}',
    "{'a':1}",
    '{"a":[1,]}',
  )
  texts.push(
    '{"a":{"b":}}',
    '{"a":[}',
    '{"a":1}}',
    '\ufeff{"a":1}',
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":-0.0e-0}',
  )
  texts.push('{"a":"\u2028"}', '{"a":"\u007f"}', '{ }', '{"":""}', '{"a":[[],{}]}', '{"a":1}\r', '\t{"a":1}')
  const reader = new JsonLine()
  const wrong = texts.filter((text) => {
    const bytes = Buffer.from(text)
    return reader.read(bytes, 0, bytes.length) !== isObject(text)
  })
  expect(wrong).toEqual([])
})

it('leaves a body with a line that is not a JSON object, or not UTF-8, to the general path', () => {
  for (const bad of ['not json', '[1]', '{"id":1,}'])
    expect(encodeJsonBody(partOf(`${lines[0]}\n${bad}\n`, 2), targets, key), bad).toBeUndefined()
  const notUtf8: Part = { ...partOf('', 1), body: Buffer.from([0x7b, 0x7d, 0xff]) }
  expect(encodeJsonBody(notUtf8, targets, key)).toBeUndefined()
})

function isObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
  } catch {
    return false
  }
}
