/** `check`, `count` and `duplicates`: what `skipprd doctor` and `skipprd verify` ask the sink. */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { makeBatch } from '@skippr/conformance'
import type { NamespaceSchema, Sink } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DUCKDB_READ_FAILED, DUCKDB_UNAVAILABLE, DuckdbSink } from '../src/index.js'
import { query, type TempWarehouse, tempWarehouse } from './helpers.js'

const orders: NamespaceSchema = {
  namespace: 'orders',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'qty', type: 'int' },
  ],
  primaryKey: ['id'],
}

let warehouse: TempWarehouse
const opened: Sink[] = []
const open = () => {
  const sink = warehouse.sink()
  opened.push(sink)
  return sink
}

beforeEach(async () => {
  warehouse = await tempWarehouse()
})
afterEach(async () => {
  for (const sink of opened.splice(0)) await sink.close()
  await rm(warehouse.dir, { recursive: true, force: true })
})

/** Lands `ids` as orders in one batch, and closes the sink so another can open the file. */
async function land(ids: number[], seq = 1): Promise<void> {
  const sink = open()
  await sink.prepare(orders)
  const rows = ids.map((id) => ({ id, qty: id % 5 }))
  expect(
    await sink.write(makeBatch({ pipeline: 'p', seq, parts: [{ schema: orders, format: 'csv', rows }] })),
  ).toEqual({
    status: 'landed',
    rows: ids.length,
  })
  await sink.close()
}

describe('check', () => {
  it('before the first write: passes, and creates neither the file nor its directory', async () => {
    const sink = new DuckdbSink(
      { path: 'not/yet/w.duckdb', schema: 'main' },
      { configDir: warehouse.dir, dataDir: path.join(warehouse.dir, 'data') },
    )
    opened.push(sink)
    await sink.check()
    expect(existsSync(path.join(warehouse.dir, 'not'))).toBe(false)
  })

  it('opens an existing file, and fails naming it while another process holds it', async () => {
    await land([1])
    await open().check()
    const holder = spawn(
      process.execPath,
      [path.join(import.meta.dirname, 'fixtures', 'hold-lock.mjs'), warehouse.file],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    try {
      await new Promise((resolve) => holder.stdout.once('data', resolve))
      await expect(open().check()).rejects.toMatchObject({
        code: DUCKDB_UNAVAILABLE,
        message: expect.stringContaining(warehouse.file),
      })
    } finally {
      holder.kill('SIGKILL')
      await new Promise((resolve) => holder.once('exit', resolve))
    }
  })
})

describe('count and duplicates', () => {
  it('are 0 before anything landed, without creating the file', async () => {
    const sink = open()
    expect(await sink.count('orders')).toBe(0)
    expect(await sink.duplicates('orders', ['id'])).toBe(0)
    expect(existsSync(warehouse.file)).toBe(false)
  })

  it('count the rows landed, and the copies beyond the first of each key', async () => {
    await land([1, 2, 3, 4])
    const sink = open()
    expect(await sink.count('orders')).toBe(4)
    expect(await sink.duplicates('orders', ['id'])).toBe(0)
    await sink.close()
    await query(warehouse.file, 'INSERT INTO main.orders SELECT * FROM main.orders WHERE id <= 2')
    await query(warehouse.file, 'INSERT INTO main.orders SELECT * FROM main.orders WHERE id = 1')
    expect(await open().count('orders')).toBe(8)
    // id 1 four times, id 2 twice: three and one rows beyond the first of each.
    expect(await open().duplicates('orders', ['id'])).toBe(4)
    expect(await open().count('missing')).toBe(0)
  })

  it('read through the sink’s own connection while it has the file open', async () => {
    const sink = open()
    await sink.prepare(orders)
    await sink.write(
      makeBatch({
        pipeline: 'p',
        seq: 1,
        parts: [{ schema: orders, format: 'csv', rows: [{ id: 7, qty: 1 }] }],
      }),
    )
    expect(await sink.count('orders')).toBe(1)
  })

  it('name the table when the key is no column of it', async () => {
    await land([1])
    await expect(open().duplicates('orders', ['nope'])).rejects.toMatchObject({
      code: DUCKDB_READ_FAILED,
      message: expect.stringContaining('"main"."orders"'),
    })
  })
})
