import type { NamespaceSchema } from '@skippr/connector-api'
import { parseCsv } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import { columnTypeOf } from '../src/column-types.js'
import { encodeCsvBody } from '../src/csv-body.js'
import { VALUE_REFUSED } from '../src/errors.js'
import type { Part } from '../src/part-records.js'
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
    { name: 'l', type: 'long' },
  ],
}
const targets: TargetColumn[] = schema.fields.map((f) => ({
  name: f.name,
  type: f.name === 'l' ? 'Float64' : columnTypeOf(f.type),
  nullable: f.name !== 'id',
  field: f.type,
}))
const key = encodedString('p/1/000000000001/0')

/** The general path's encoding: every record decoded by parseCsv, every value written from its text. */
function fromStrings(body: Uint8Array) {
  const writer = new RowBinaryWriter()
  const refused: { row: number; error: string; code: string }[] = []
  parseCsv(new TextDecoder().decode(body)).forEach((cells, row) => {
    let problem: string | undefined
    targets.forEach((target, i) => {
      const cell = cells[i] ?? null
      const reason = writer.value(target, cell)
      problem ??= reason && valueProblem(target, cell, reason)
    })
    if (problem) refused.push({ row, error: problem, code: VALUE_REFUSED })
    writer.encoded(key)
  })
  return { body: Buffer.from(writer.bytes()), refused }
}

const records = [
  '1,2,3.47,plain,true,"{""a"": [1]}",9007199254740992',
  '-0,-0,-0,"quoted, with ""quotes"" and a\nnewline",false,,-0',
  '007,0,0.0,é😀 ü,,null,123',
  '\ufeff5,1,0.1,\ufeffstarts with a BOM,true,"""text""",1',
  '123456789012345,-2147483648,0.30000000000000004,back\\slash,false,[],12',
  '1234567890123456,2147483647,5e-324,"",true,{},9007199254740993',
  '9223372036854775807,1,1.7976931348623157e308,"ctrl\tchar",false,1,-9007199254740993',
  '9223372036854775808,2147483648,1e309,x,yes,2,0',
  '3,1.5,1e-400,y,True,3,1.5',
  '4,+1,00.5,z,1,4,1e3',
  '6,,.5,,false,5,',
  '7,12,NaN,a,true,6,-12\r',
  '8,13,-Infinity,"b",false,7,14\r',
  '9,14,900719925474099.1,c,true,8,15',
  '10,15,0.0000000000000000000001,d,false,9,16',
]

it('encodes a CSV body from its bytes exactly as from its decoded strings, refusing the same rows', () => {
  for (const body of [
    `\ufeff${records.join('\n')}\n`,
    records.join('\n'),
    records.map((r) => r.replace(/\r$/, '')).join('\r\n'),
  ]) {
    const bytes = Buffer.from(body)
    const part: Part = {
      namespace: 'mixed',
      schemaVersion: 1,
      format: 'csv',
      body: bytes,
      rows: records.length,
      schema,
    }
    const encoded = encodeCsvBody(part, targets, key)
    expect(encoded).toBeDefined()
    const expected = fromStrings(bytes)
    expect(encoded?.refused).toEqual(expected.refused)
    expect(Buffer.from(encoded?.body ?? [])).toEqual(expected.body)
  }
})

it('leaves to the general path what it reports: another number of fields, json that is not JSON, no closing quote, not UTF-8', () => {
  const part = (body: string | Buffer): Part => ({
    namespace: 'mixed',
    schemaVersion: 1,
    format: 'csv',
    body: Buffer.from(body),
    rows: 1,
    schema,
  })
  for (const body of ['1,2,3,s,true,{},1,extra\n', '1,2,3\n', '1,2,3,s,true,{x,1\n', '1,2,3,"s\n'])
    expect(encodeCsvBody(part(body), targets, key), body).toBeUndefined()
  expect(encodeCsvBody(part(Buffer.from([0x31, 0xff, 0x0a])), targets, key)).toBeUndefined()
})
