/** `check`, `count` and `duplicates` against the real PostgreSQL: what `skipprd doctor` and `verify` ask. */
import type { NamespaceSchema } from '@skippr/connector-api'
import { encodeCsv, hasCode, silentLogger } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PostgresSink, UNAVAILABLE } from '../src/index.js'
import type { TestDb } from './db.js'
import { freshSchema, PG_URL } from './db.js'

let db: TestDb
beforeEach(async () => {
  db = await freshSchema()
})
afterEach(async () => {
  await db.drop()
})

const orders: NamespaceSchema = {
  namespace: 'orders',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'qty', type: 'int' },
  ],
  primaryKey: ['id'],
}

async function land(ids: number[]): Promise<void> {
  const sink = db.sink()
  await sink.prepare(orders)
  const rows = ids.map((id) => ({ id, qty: id % 3 }))
  const outcome = await sink.write({
    id: { pipeline: 'p', epoch: 'e1', seq: 1n },
    fence: 1n,
    parts: [
      {
        namespace: 'orders',
        schemaVersion: 1,
        format: 'csv',
        rows: rows.length,
        body: encodeCsv(rows, orders.fields),
        schema: orders,
      },
    ],
  })
  expect(outcome).toEqual({ status: 'landed', rows: ids.length })
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a failure')
    },
    (error: Error) => error,
  )
}

const schemaExists = async () =>
  (await db.sql('SELECT to_regnamespace($1) IS NOT NULL AS found', [`"${db.schema}"`])).rows[0]?.found

describe('check', () => {
  it('connects, and creates neither the schema nor a table', async () => {
    await db.sink().check()
    expect(await schemaExists()).toBe(false)
  })

  it('names the server, without its password, when nothing listens there', async () => {
    const down = PG_URL.replace(/\/\/([^@/]*)@[^/]+\//, '//$1:hunter22@127.0.0.1:1/')
    const sink = new PostgresSink({ connection_string: down, schema: db.schema }, silentLogger)
    try {
      const error = await rejection(sink.check())
      expect(hasCode(error, UNAVAILABLE)).toBe(true)
      expect(error.message).toMatch(/^cannot reach PostgreSQL at postgres:\/\/[^:@]*@127\.0\.0\.1:1\//)
      expect(error.message).not.toContain('hunter22')
    } finally {
      await sink.close()
    }
  })
})

describe('count and duplicates', () => {
  it('are 0 before the table exists', async () => {
    const sink = db.sink()
    expect(await sink.count('orders')).toBe(0)
    expect(await sink.duplicates('orders', ['id'])).toBe(0)
  })

  it('count the rows landed, and the copies beyond the first of each key', async () => {
    await land([1, 2, 3])
    const sink = db.sink()
    expect(await sink.count('orders')).toBe(3)
    expect(await sink.duplicates('orders', ['id'])).toBe(0)
    await db.sql(`INSERT INTO "${db.schema}".orders SELECT * FROM "${db.schema}".orders WHERE id <= 2`)
    expect(await sink.count('orders')).toBe(5)
    expect(await sink.duplicates('orders', ['id'])).toBe(2)
    // Rows whose whole key repeats: (id, qty) of the copies repeat too.
    expect(await sink.duplicates('orders', ['id', 'qty'])).toBe(2)
  })
})
