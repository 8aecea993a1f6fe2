import { makeBatch, rawPart } from '@skippr/conformance'
import type { NamespaceSchema, Sink } from '@skippr/connector-api'
import { encodeCsv, encodeJsonl } from '@skippr/connector-api'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { RECORD_REFUSED, VALUE_REFUSED } from '../src/index.js'
import { qualifiedName } from '../src/sql.js'
import { startTestServer, type TestServer } from './servers.js'

let server: TestServer
let sink: Sink | undefined
beforeAll(async () => {
  server = await startTestServer()
})
afterEach(async () => sink?.close())
afterAll(async () => server?.stop())

async function openSink(label: string): Promise<{ sink: Sink; database: string }> {
  const database = server.database(label)
  sink = server.sink({ database })
  return { sink, database }
}

const numbers: NamespaceSchema = {
  namespace: 'numbers',
  primaryKey: ['i'],
  fields: [
    { name: 'i', type: 'long' },
    { name: 'd', type: 'double' },
  ],
}

const EDGE_DOUBLES = [
  1e-7,
  -1234567.25,
  0.1,
  5e-324,
  -5e-324,
  2.225073858507201e-308,
  1.7976931348623157e308,
  -1.7976931348623157e308,
  2 ** 53 + 2,
  2 ** 53 - 1,
  0.30000000000000004,
  8.706446102242175e-7,
  -0,
  0,
]

function randomDoubles(count: number): number[] {
  const view = new DataView(new ArrayBuffer(8))
  const values: number[] = []
  while (values.length < count) {
    view.setUint32(0, (Math.random() * 2 ** 32) >>> 0)
    view.setUint32(4, (Math.random() * 2 ** 32) >>> 0)
    const value = view.getFloat64(0)
    if (Number.isFinite(value)) values.push(value)
  }
  return values
}

it('doubles land bit-exactly: edge values and 2,000 random bit patterns, from csv and jsonl', async () => {
  const { sink, database } = await openSink('doubles')
  await sink.prepare(numbers)
  const values = [...EDGE_DOUBLES, ...randomDoubles(2000)]
  const half = Math.floor(values.length / 2)
  // Bodies written by hand, as a source writes a double (its shortest text), keeping the sign of -0.
  const csv = values.slice(0, half).map((d, i) => `${i},${numberText(d)}\n`)
  const jsonl = values.slice(half).map((d, i) => `{"i":${half + i},"d":${numberText(d)}}\n`)
  const batch = makeBatch({
    pipeline: 'doubles',
    seq: 1,
    parts: [
      rawPart(numbers, 'csv', csv.join(''), csv.length),
      rawPart(numbers, 'jsonl', jsonl.join(''), jsonl.length),
    ],
  })
  expect(await sink.write(batch)).toEqual({ status: 'landed', rows: values.length })
  // Read as bits, so the check does not depend on how the server prints a double.
  const held = await server.clickhouse.query(
    `SELECT i, hex(reinterpretAsString(d)) FROM ${qualifiedName(database, 'numbers')} ORDER BY i FORMAT TabSeparated`,
  )
  const wrong = held
    .trim()
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([i, hex]) => !Object.is(fromHex(hex ?? ''), values[Number(i)]))
    .map(([i]) => numberText(values[Number(i)] ?? 0))
  expect(wrong).toEqual([])
})

it('NaN and the infinities land from csv text as themselves', async () => {
  const { sink, database } = await openSink('specials')
  await sink.prepare(numbers)
  const body = '1,NaN\n2,Infinity\n3,-Infinity\n'
  expect(
    await sink.write(makeBatch({ pipeline: 'specials', seq: 1, parts: [rawPart(numbers, 'csv', body, 3)] })),
  ).toEqual({
    status: 'landed',
    rows: 3,
  })
  const held = await server.clickhouse.query(
    `SELECT i, isNaN(d), isInfinite(d), d > 0 FROM ${qualifiedName(database, 'numbers')} ORDER BY i FORMAT TabSeparated`,
  )
  expect(held).toBe('1\t1\t0\t0\n2\t0\t1\t1\n3\t0\t1\t0\n')
})

it('dates and timestamps land as the batch writes them, also 1970-01-01, BC and five-digit years', async () => {
  const { sink, database } = await openSink('dates')
  const schema: NamespaceSchema = {
    namespace: 'days',
    fields: [
      { name: 'n', type: 'int' },
      { name: 'day', type: 'date' },
      { name: 'at', type: 'timestamp' },
    ],
  }
  await sink.prepare(schema)
  const rows = [
    { n: 1, day: '1970-01-01', at: '1970-01-01T00:00:00.000000Z' },
    { n: 2, day: '0044-03-15 (BC)', at: '0044-03-15 (BC) 10:00:00.000000Z' },
    { n: 3, day: '12345-06-07', at: '12345-06-07T08:09:10.123456Z' },
    { n: 4, day: '2149-06-07', at: 'infinity' },
  ]
  const batch = makeBatch({ pipeline: 'dates', seq: 1, parts: [{ schema, format: 'csv', rows }] })
  expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 4 })
  const held = await server.rows(database, 'days', 'n')
  expect(held.map(({ n, day, at }) => ({ n, day, at }))).toEqual(rows)
})

it('refuses every row a column cannot hold, naming part, row, column and value; nothing is written', async () => {
  const { sink, database } = await openSink('refused')
  const schema: NamespaceSchema = {
    namespace: 'refused',
    primaryKey: ['id'],
    fields: [
      { name: 'id', type: 'long' },
      { name: 'qty', type: 'int' },
      { name: 'score', type: 'double' },
      { name: 'ok', type: 'boolean' },
      { name: 'doc', type: 'json' },
    ],
  }
  await sink.prepare(schema)
  const good = { id: 1, qty: 1, score: 0.5, ok: true, doc: { a: 1 } }
  const jsonl = [
    '{"id": 1, "qty": 1}',
    '{"id": null, "qty": 2}',
    '{"id": 3, "qty": 2147483648}',
    '{"id": 4, "score": 1e309}',
    'not json',
    '',
    '{"id": 9223372036854775808}',
    '{"id": 6, "ok": "yes"}',
    '{"id": 7, "qty": 1.5}',
  ].join('\n')
  const notUtf8 = Buffer.concat([
    Buffer.from('2,2,,,\n3,'),
    Buffer.from([0xff]),
    Buffer.from(',,,\n4,4,,,"{x"\n'),
  ])
  const batch = makeBatch({
    pipeline: 'refused',
    seq: 1,
    parts: [
      { schema, format: 'csv', rows: [good] },
      rawPart(schema, 'jsonl', jsonl, 8),
      rawPart(schema, 'csv', notUtf8, 3),
    ],
  })
  const outcome = await sink.write(batch)
  expect(outcome).toEqual({
    status: 'refused',
    rows: [
      {
        part: 1,
        row: 1,
        code: VALUE_REFUSED,
        error: expect.stringMatching(/^column "id": NULL is NULL, .*key/),
      },
      {
        part: 1,
        row: 2,
        code: VALUE_REFUSED,
        error: 'column "qty": "2147483648" is out of the range of Int32',
      },
      {
        part: 1,
        row: 3,
        code: VALUE_REFUSED,
        error: 'column "score": "1e309" is beyond the range of Float64',
      },
      { part: 1, row: 4, code: RECORD_REFUSED, error: 'the line is not JSON' },
      {
        part: 1,
        row: 5,
        code: VALUE_REFUSED,
        error: 'column "id": "9223372036854775808" is out of the range of Int64',
      },
      { part: 1, row: 6, code: VALUE_REFUSED, error: 'column "ok": "yes" is not a boolean (true or false)' },
      { part: 1, row: 7, code: VALUE_REFUSED, error: 'column "qty": "1.5" is not an integer (Int32)' },
      { part: 2, row: 1, code: RECORD_REFUSED, error: 'the record is not UTF-8' },
      { part: 2, row: 2, code: RECORD_REFUSED, error: 'column "doc": "{x" is not JSON' },
    ],
  })
  expect(await server.rows(database, 'refused')).toEqual([])
  // Without the refused rows, the batch lands under its identity.
  const rest = makeBatch({
    pipeline: 'refused',
    seq: 1,
    parts: [
      { schema, format: 'csv', rows: [good] },
      rawPart(schema, 'jsonl', encodeJsonl([{ id: 1, qty: 1 }]), 1),
      rawPart(schema, 'csv', encodeCsv([{ id: 2, qty: 2 }], schema.fields), 1),
    ],
  })
  expect(await sink.write(rest)).toEqual({ status: 'landed', rows: 3 })
  expect(await server.rows(database, 'refused')).toHaveLength(3)
})

function numberText(value: number): string {
  return Object.is(value, -0) ? '-0' : String(value)
}

/** The double whose little-endian bytes `hex` shows; the server drops trailing zero bytes. */
function fromHex(hex: string): number {
  return Buffer.concat([Buffer.from(hex, 'hex'), Buffer.alloc(8)]).readDoubleLE(0)
}

it('a csv body that does not parse (an unterminated quote) is fatal, naming the namespace', async () => {
  const { sink } = await openSink('malformed')
  await sink.prepare(numbers)
  const outcome = await sink.write(
    makeBatch({ pipeline: 'malformed', seq: 1, parts: [rawPart(numbers, 'csv', '1,"2\n', 1)] }),
  )
  expect({ status: outcome.status, error: 'error' in outcome && outcome.error.message }).toEqual({
    status: 'fatal',
    error: expect.stringContaining('namespace numbers: the CSV body is malformed'),
  })
})
