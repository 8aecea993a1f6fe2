import { makeBatch } from '@skippr/conformance'
import type { NamespaceSchema } from '@skippr/connector-api'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { quoteString } from '../src/sql.js'
import { startTestServer, type TestServer } from './servers.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server?.stop())

const v1: NamespaceSchema = {
  namespace: 'evolving',
  primaryKey: ['id', 'k'],
  fields: [
    { name: 'id', type: 'long' },
    { name: 'k', type: 'int' },
    { name: 'qty', type: 'int' },
    { name: 'score', type: 'int' },
    { name: 'flag', type: 'boolean' },
    { name: 'big', type: 'long' },
  ],
}

const v2: NamespaceSchema = {
  ...v1,
  fields: [
    { name: 'id', type: 'long' },
    { name: 'k', type: 'long' },
    { name: 'qty', type: 'long' },
    { name: 'score', type: 'double' },
    { name: 'flag', type: 'string' },
    { name: 'big', type: 'double' },
    { name: 'extra', type: 'string' },
  ],
}

it('adds columns and widens types in place; key columns and Int64 keep their type, refusing what they cannot hold', async () => {
  const database = server.database('evolve')
  const sink = server.sink({ database })
  try {
    await sink.prepare(v1)
    const old = { id: 1, k: 1, qty: 5, score: 7, flag: true, big: 2 ** 53 + 2 }
    const first = makeBatch({
      pipeline: 'evolve',
      seq: 1,
      parts: [{ schema: v1, format: 'csv', rows: [old] }],
    })
    expect(await sink.write(first)).toEqual({ status: 'landed', rows: 1 })

    await sink.prepare(v2)
    await sink.prepare(v2)
    const types = await server.value(
      `SELECT groupArray(concat(name, ' ', type)) FROM system.columns
        WHERE database = ${quoteString(database)} AND table = 'evolving' FORMAT TSV`,
    )
    expect(types).toBe(
      "['id Int64','k Int32','qty Nullable(Int64)','score Nullable(Float64)','flag Nullable(String)','big Nullable(Int64)','_skippr_batch String','extra Nullable(String)']",
    )
    const wide = { id: 2, k: 2, qty: 5_000_000_000, score: 2.5, flag: 'maybe', big: 3, extra: 'x' }
    const tooWide = [
      { id: 3, k: 2 ** 40, qty: 1 },
      { id: 4, k: 1, big: 0.5 },
    ]
    const second = (rows: Record<string, unknown>[]) =>
      makeBatch({
        pipeline: 'evolve',
        seq: 2,
        parts: [{ schema: v2, format: 'jsonl', rows, schemaVersion: 2 }],
      })
    expect(await sink.write(second([wide, ...tooWide]))).toEqual({
      status: 'refused',
      rows: [
        {
          part: 0,
          row: 1,
          code: 'SKIPPR_CH_VALUE',
          error: 'column "k": "1099511627776" is out of the range of Int32',
        },
        { part: 0, row: 2, code: 'SKIPPR_CH_VALUE', error: 'column "big": "0.5" is not an integer (Int64)' },
      ],
    })
    expect(await sink.write(second([wide]))).toEqual({ status: 'landed', rows: 1 })
    const rows = await server.rows(database, 'evolving', 'id')
    expect(rows.map(({ _skippr_batch, ...row }) => row)).toEqual([
      { id: '1', k: 1, qty: '5', score: 7, flag: 'true', big: String(2 ** 53 + 2), extra: null },
      { id: '2', k: 2, qty: '5000000000', score: 2.5, flag: 'maybe', big: '3', extra: 'x' },
    ])
  } finally {
    await sink.close()
  }
})
