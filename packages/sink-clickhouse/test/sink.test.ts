import { makeBatch } from '@skippr/conformance'
import type { NamespaceSchema, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { BATCH_COLUMN, isPermanent, partKey } from '@skippr/connector-api'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { BATCHES_TABLE, type ClickhouseSinkOptions, NO_PRIMARY_KEY } from '../src/index.js'
import { qualifiedName, quoteString } from '../src/sql.js'
import { startTestServer, type TestServer } from './servers.js'

let server: TestServer
const open = new Set<Sink>()

beforeAll(async () => {
  server = await startTestServer()
}, 60_000)
afterEach(async () => {
  for (const sink of open) await sink.close()
  open.clear()
})
afterAll(async () => server?.stop())

function sinkOn(options: Partial<ClickhouseSinkOptions> & { database: string }): Sink {
  const sink = server.sink(options)
  open.add(sink)
  return sink
}

const orders: NamespaceSchema = {
  namespace: 'orders',
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'long' },
    { name: 'item', type: 'string' },
    { name: 'qty', type: 'int' },
  ],
}

const orderRows = [
  { id: 1, item: 'bike', qty: 2 },
  { id: 2, item: 'lock', qty: 1 },
]

function ordersBatch(pipeline: string, seq: number): SinkBatch {
  return makeBatch({ pipeline, seq, parts: [{ schema: orders, format: 'csv', rows: orderRows }] })
}

async function deleteLedgerRows(database: string): Promise<void> {
  await server.clickhouse.query(`ALTER TABLE ${qualifiedName(database, BATCHES_TABLE)} DELETE WHERE 1`)
  const pending = `SELECT count() FROM system.mutations WHERE database = ${quoteString(database)} AND NOT is_done`
  for (let i = 0; i < 100 && (await server.value(pending)) !== '0'; i++)
    await new Promise((r) => setTimeout(r, 50))
  expect(await server.value(`SELECT count() FROM ${qualifiedName(database, BATCHES_TABLE)}`)).toBe('0')
}

function expectStatus(outcome: WriteOutcome, status: WriteOutcome['status']): void {
  expect(
    'error' in outcome ? { status: outcome.status, error: outcome.error.message } : outcome,
  ).toMatchObject({
    status,
  })
}

describe('a retry after a crash before the ledger row', () => {
  for (const [engine, copies] of [
    ['ReplicatedMergeTree', 1],
    ['MergeTree', 2],
  ] as const) {
    it(`${engine}: the batch written again by a fresh sink leaves ${copies} cop${copies === 1 ? 'y' : 'ies'}, tagged with one key`, async () => {
      const database = server.database(`retry_${engine.toLowerCase()}`)
      const batch = ordersBatch('retry', 1)
      const first = sinkOn({ database, engine })
      await first.prepare(orders)
      expectStatus(await first.write(batch), 'landed')
      await first.close()
      // The crash: the parts landed, the ledger row did not.
      await deleteLedgerRows(database)
      const restarted = sinkOn({ database, engine })
      await restarted.prepare(orders)
      const dropped = () =>
        server.value("SELECT sum(value) FROM system.events WHERE event = 'DuplicatedInsertedBlocks'")
      const droppedBefore = Number(await dropped())
      expectStatus(await restarted.write(batch), 'landed')
      expect(Number(await dropped()) - droppedBefore).toBe(2 - copies)
      const rows = await server.rows(database, 'orders')
      expect(rows).toHaveLength(orderRows.length * copies)
      expect(new Set(rows.map((r) => r[BATCH_COLUMN]))).toEqual(new Set([partKey(batch.id, 0)]))
      expect(
        await server.value(
          `SELECT engine FROM system.tables WHERE database = ${quoteString(database)} AND name = 'orders'`,
        ),
      ).toBe(engine)
      // With the ledger row back, a third write sends nothing.
      expectStatus(await restarted.write(batch), 'already-landed')
    })
  }

  it('ReplicatedMergeTree: two batches with the same rows under different seqs both stay', async () => {
    const database = server.database('twins')
    const sink = sinkOn({ database, engine: 'ReplicatedMergeTree' })
    await sink.prepare(orders)
    expectStatus(await sink.write(ordersBatch('twins', 1)), 'landed')
    expectStatus(await sink.write(ordersBatch('twins', 2)), 'landed')
    const rows = await server.rows(database, 'orders')
    expect(rows).toHaveLength(2 * orderRows.length)
  })
})

it('18.16 keeps the hashes of the last 100 blocks of a replicated table, and of the last 7 days', async () => {
  const window = await server.value(
    "SELECT groupArray(concat(name, '=', value)) FROM system.merge_tree_settings WHERE name LIKE 'replicated_deduplication_window%' FORMAT TSV",
  )
  expect(window).toBe(
    "['replicated_deduplication_window=100','replicated_deduplication_window_seconds=604800']",
  )
})

describe('engines', () => {
  it('ReplacingMergeTree orders by the primary key; without one prepare stops for good', async () => {
    const database = server.database('replacing')
    const sink = sinkOn({ database, engine: 'ReplacingMergeTree' })
    await sink.prepare(orders)
    const table = `database = ${quoteString(database)} AND name = 'orders'`
    expect(
      await server.value(`SELECT concat(engine, ' ', sorting_key) FROM system.tables WHERE ${table}`),
    ).toBe('ReplacingMergeTree id')
    const keyless = { ...orders, namespace: 'keyless', primaryKey: [] }
    const error = await sink.prepare(keyless).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect({ code: (error as { code?: string }).code, permanent: isPermanent(error) }).toEqual({
      code: NO_PRIMARY_KEY,
      permanent: true,
    })
    expect((error as Error).message).toContain('keyless')
  })

  it('MergeTree without a primary key orders by the batch column', async () => {
    const database = server.database('keyless')
    const sink = sinkOn({ database })
    await sink.prepare({ ...orders, primaryKey: undefined })
    expect(
      await server.value(
        `SELECT sorting_key FROM system.tables WHERE database = ${quoteString(database)} AND name = 'orders'`,
      ),
    ).toBe(BATCH_COLUMN)
  })
})
