import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { NamespaceSchema, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { encodeCsv, encodeJsonl, hasCode, parseConnectorConfig, silentLogger } from '@skippr/connector-api'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  DATA_REJECTED,
  sink as definition,
  FENCED,
  PERMISSION_DENIED,
  PostgresSink,
  RESERVED_NAME,
  STATEMENT_REJECTED,
  UNAVAILABLE,
} from '../src/index.js'
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
    { name: 'note', type: 'string' },
  ],
  primaryKey: ['id'],
}

function csvBatch(seq: number, body: string, rows: number, fence = 1n): SinkBatch {
  return {
    id: { pipeline: 'p', epoch: 'e1', seq: BigInt(seq) },
    fence,
    parts: [
      {
        namespace: 'orders',
        schemaVersion: 1,
        format: 'csv',
        rows,
        body: new TextEncoder().encode(body),
        schema: orders,
      },
    ],
  }
}

function rowsBatch(seq: number, ids: number[]): SinkBatch {
  const rows = ids.map((id) => ({ id, qty: id % 7, note: `n${id}` }))
  return {
    id: { pipeline: 'p', epoch: 'e1', seq: BigInt(seq) },
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
  }
}

const errorOf = (outcome: WriteOutcome) => ('error' in outcome ? outcome.error : undefined)
const count = async (table = 'orders') => (await db.rows(table)).length
const markers = async () =>
  Number((await db.sql(`SELECT count(*) AS n FROM ${db.schema}._skippr_batches`)).rows[0]?.n)

/** A transaction holding `LOCK TABLE orders IN <mode> MODE` until released. */
async function lockTable(mode: string): Promise<{ pid: number; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  await client.query('BEGIN')
  await client.query(`LOCK TABLE ${db.schema}.orders IN ${mode} MODE`)
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
  return {
    pid: rows[0]!.pid,
    async release() {
      await client.query('ROLLBACK')
      await client.end()
    },
  }
}

/** Waits until `n` backends wait on `holder`'s lock; returns the pids blocking each of them. */
async function backendsBlockedBy(holder: { pid: number }, n: number): Promise<number[][]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const { rows } = await db.sql<{ blocking: number[] }>(
      'SELECT pg_blocking_pids(pid) AS blocking FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
      [holder.pid],
    )
    if (rows.length >= n) return rows.map((r) => r.blocking)
    if (Date.now() > deadline)
      throw new Error(`${rows.length} of ${n} backends blocked by the table lock after 10 s`)
    await sleep(20)
  }
}

describe('concurrent writers of one identity', () => {
  it('land the batch once: one writer lands, the others find it landed', async () => {
    const sinks = Array.from({ length: 6 }, () => db.sink())
    await sinks[0]?.prepare(orders)
    for (let round = 1; round <= 5; round++) {
      const batch = rowsBatch(
        round,
        Array.from({ length: 200 }, (_, i) => round * 1000 + i),
      )
      const outcomes = await Promise.all(sinks.map((sink) => sink.write(batch)))
      expect(outcomes.filter((o) => o.status === 'landed')).toEqual([{ status: 'landed', rows: 200 }])
      expect(outcomes.filter((o) => o.status === 'already-landed').length).toBe(sinks.length - 1)
    }
    expect(await count()).toBe(1000)
    expect(new Set((await db.rows('orders')).map((r) => r.id)).size).toBe(1000)
    expect(await markers()).toBe(5)
  })

  it('prepare the same new table at once without tripping over each other', async () => {
    const sinks = Array.from({ length: 5 }, () => db.sink())
    await Promise.all(sinks.map((sink) => sink.prepare(orders)))
    const wider: NamespaceSchema = { ...orders, fields: [...orders.fields, { name: 'extra', type: 'json' }] }
    await Promise.all(sinks.map((sink) => sink.prepare(wider)))
    const { rows } = await db.sql<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = 'orders' ORDER BY ordinal_position`,
      [db.schema],
    )
    expect(rows).toEqual([
      { column_name: 'id', data_type: 'bigint' },
      { column_name: 'qty', data_type: 'integer' },
      { column_name: 'note', data_type: 'text' },
      { column_name: 'extra', data_type: 'jsonb' },
    ])
  })
})

describe('tables', () => {
  it('creates columns with the mapped types, and the table on first write without prepare', async () => {
    const all: NamespaceSchema = {
      namespace: 'Kinds',
      fields: (['string', 'int', 'long', 'double', 'boolean', 'date', 'timestamp', 'json'] as const).map(
        (type) => ({
          name: `c ${type}`,
          type,
        }),
      ),
    }
    const sink = db.sink()
    const outcome = await sink.write({
      id: { pipeline: 'p', epoch: 'e', seq: 1n },
      fence: 1n,
      parts: [
        {
          namespace: 'Kinds',
          schemaVersion: 1,
          format: 'jsonl',
          rows: 1,
          body: encodeJsonl([{}]),
          schema: all,
        },
      ],
    })
    expect(outcome).toEqual({ status: 'landed', rows: 1 })
    const { rows } = await db.sql<{ data_type: string }>(
      `SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'Kinds'
        ORDER BY ordinal_position`,
      [db.schema],
    )
    expect(rows.map((r) => r.data_type)).toEqual([
      'text',
      'integer',
      'bigint',
      'double precision',
      'boolean',
      'date',
      'timestamp with time zone',
      'jsonb',
    ])
  })

  it('lands jsonl integers beyond 2^53 exactly: the server parses the numbers, not JavaScript', async () => {
    const sink = db.sink()
    const body = new TextEncoder().encode(
      '{"id": 9007199254740993, "qty": 1, "note": "a"}\n{"id": 9223372036854775807, "note": null}\n',
    )
    const outcome = await sink.write({
      id: { pipeline: 'p', epoch: 'e', seq: 1n },
      fence: 1n,
      parts: [{ namespace: 'orders', schemaVersion: 1, format: 'jsonl', rows: 2, body, schema: orders }],
    })
    expect(outcome).toEqual({ status: 'landed', rows: 2 })
    const { rows } = await db.sql(`SELECT id::text, qty, note FROM ${db.schema}.orders ORDER BY id`)
    expect(rows).toEqual([
      { id: '9007199254740993', qty: 1, note: 'a' },
      { id: '9223372036854775807', qty: null, note: null },
    ])
  })

  it('refuses a namespace that would clash with its bookkeeping tables', async () => {
    const error = await db
      .sink()
      .prepare({ ...orders, namespace: '_skippr_batches' })
      .catch((e: unknown) => e)
    expect(hasCode(error, RESERVED_NAME)).toBe(true)
  })
})

describe('failures', () => {
  it('a value PostgreSQL refuses: fatal, naming the table, with the server fields, nothing written', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    const outcome = await sink.write(csvBatch(1, '1,2,"ok"\n2,lots,"bad"\n', 2))
    expect(outcome.status).toBe('fatal')
    const error = errorOf(outcome)
    expect(hasCode(error, DATA_REJECTED)).toBe(true)
    expect(error?.message).toContain(`"${db.schema}"."orders"`)
    expect(error?.message).toContain('invalid input syntax for type integer: "lots"')
    expect(error).toMatchObject({ sqlState: '22P02', where: expect.stringContaining('line 2, column qty') })
    expect(await count()).toBe(0)
    expect(await markers()).toBe(0)
    // The identity was not claimed: the corrected batch lands under it.
    expect(await sink.write(csvBatch(1, '1,2,"ok"\n2,3,"fixed"\n', 2))).toEqual({ status: 'landed', rows: 2 })
  })

  it('a constraint violation (class 23) is fatal too', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    await db.sql(`ALTER TABLE ${db.schema}.orders ADD CHECK (qty >= 0)`)
    const outcome = await sink.write(csvBatch(1, '1,-5,\n', 1))
    expect(outcome.status).toBe('fatal')
    expect(errorOf(outcome)).toMatchObject({
      code: DATA_REJECTED,
      sqlState: '23514',
      constraint: expect.any(String),
    })
  })

  it('a role without privileges: fatal permission error', async () => {
    const role = `skippr_test_${randomBytes(4).toString('hex')}`
    await db.sql(`CREATE ROLE ${role} LOGIN`)
    try {
      await db.sink().prepare(orders)
      const url = new URL(PG_URL)
      url.username = role
      const sink = new PostgresSink({ connection_string: url.toString(), schema: db.schema }, silentLogger)
      const outcome = await sink.write(csvBatch(1, '1,1,\n', 1))
      await sink.close()
      expect(outcome.status).toBe('fatal')
      expect(errorOf(outcome)).toMatchObject({ code: PERMISSION_DENIED, sqlState: '42501' })
    } finally {
      await db.sql(`DROP ROLE ${role}`)
    }
  })

  it('an unreachable server: retry, with the password redacted', async () => {
    const sink = new PostgresSink(
      { connection_string: 'postgres://app:hunter2-secret@127.0.0.1:1/test', schema: 'public' },
      silentLogger,
    )
    const outcome = await sink.write(csvBatch(1, '1,1,\n', 1))
    const prepared = await sink.prepare(orders).catch((e: unknown) => e)
    await sink.close()
    expect(outcome.status).toBe('retry')
    const error = errorOf(outcome)
    expect(hasCode(error, UNAVAILABLE)).toBe(true)
    expect(error?.message).toContain('postgres://app@127.0.0.1:1/test')
    expect(hasCode(prepared, UNAVAILABLE)).toBe(true)
    for (const text of [error?.message, String(error), JSON.stringify(error), String(prepared), error?.stack])
      expect(text).not.toContain('hunter2-secret')
  })

  it('a missing database: fatal, and the password stays out of the message', async () => {
    const url = new URL(PG_URL)
    url.password = 'hunter2-secret'
    url.pathname = `/no_such_db_${randomBytes(3).toString('hex')}`
    const sink = new PostgresSink({ connection_string: url.toString(), schema: 'public' }, silentLogger)
    const outcome = await sink.write(csvBatch(1, '1,1,\n', 1))
    await sink.close()
    expect(outcome.status).toBe('fatal')
    expect(errorOf(outcome)).toMatchObject({ code: STATEMENT_REJECTED, sqlState: '3D000' })
    expect(JSON.stringify(errorOf(outcome)) + errorOf(outcome)?.message).not.toContain('hunter2-secret')
  })

  it('a connection killed in the middle of a write: retry, nothing half-written, the retry lands once', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    // Hold the fence row so the write blocks inside its transaction, then kill its backend.
    await sink.write(rowsBatch(1, [1]))
    const holder = new pg.Client({ connectionString: PG_URL })
    await holder.connect()
    await holder.query('BEGIN')
    await holder.query(`SELECT * FROM ${db.schema}._skippr_fence FOR UPDATE`)
    let settled: WriteOutcome | undefined
    const pending = sink.write(rowsBatch(2, [2, 3, 4])).then((outcome) => {
      settled = outcome
      return outcome
    })
    let pid: number | undefined
    const deadline = Date.now() + 10_000
    while (pid === undefined) {
      // The write must be blocked on the fence row; if it ended instead, say how.
      if (settled) throw new Error(`the write ended before it blocked: ${JSON.stringify(settled)}`)
      if (Date.now() > deadline) {
        const { rows } = await holder.query(
          "SELECT pid, state, wait_event_type, wait_event, query FROM pg_stat_activity WHERE application_name = 'skippr'",
        )
        throw new Error(`no backend is blocked by the fence lock after 10 s: ${JSON.stringify(rows)}`)
      }
      // The backend our lock blocks, whatever its wait looks like from outside.
      const { rows } = await holder.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))',
      )
      pid = rows[0]?.pid
      if (pid === undefined) await sleep(20)
    }
    await holder.query('SELECT pg_terminate_backend($1)', [pid])
    await holder.query('ROLLBACK')
    await holder.end()
    const outcome = await pending
    expect(outcome.status).toBe('retry')
    expect(await count()).toBe(1)
    expect(await sink.write(rowsBatch(2, [2, 3, 4]))).toEqual({ status: 'landed', rows: 3 })
    expect(await sink.write(rowsBatch(2, [2, 3, 4]))).toEqual({ status: 'already-landed' })
    expect(await count()).toBe(4)
  })

  it("a writer's batches load side by side: neither waits for the other's transaction", async () => {
    const sink = db.sink()
    expect(sink.concurrentWrites).toBe(2)
    await sink.prepare(orders)
    expect((await sink.write(rowsBatch(1, [1]))).status).toBe('landed')
    // A SHARE lock on the table stops each write at its COPY, inside its transaction.
    const holder = await lockTable('SHARE')
    const writes = [sink.write(rowsBatch(2, [2, 3])), sink.write(rowsBatch(3, [4]))]
    // Both must reach the COPY, each blocked by the holder alone, not by the other write.
    const blocked = await backendsBlockedBy(holder, 2)
    expect(blocked.every((pids) => pids.length === 1)).toBe(true)
    await holder.release()
    expect((await Promise.all(writes)).map((o) => o.status)).toEqual(['landed', 'landed'])
    expect(await count()).toBe(4)
  })

  it("a newer writer waits for the older writer's write in progress, which commits; then the older is fenced", async () => {
    const older = db.sink()
    const newer = db.sink()
    await older.prepare(orders)
    expect((await older.write(rowsBatch(1, [1]))).status).toBe('landed')
    const holder = await lockTable('SHARE')
    const finished: string[] = []
    const olderWrite = older.write(rowsBatch(2, [2])).then((o) => finished.push(`older ${o.status}`))
    await backendsBlockedBy(holder, 1)
    // The newer writer's fence raise must wait for the older writer's share lock on the fence row.
    const newerWrite = newer
      .write({ ...rowsBatch(3, [3]), fence: 2n })
      .then((o) => finished.push(`newer ${o.status}`))
    await sleep(200)
    expect(finished).toEqual([])
    await holder.release()
    await Promise.all([olderWrite, newerWrite])
    expect(finished).toEqual(['older landed', 'newer landed'])
    const fenced = await older.write(rowsBatch(4, [4]))
    expect(fenced.status).toBe('fatal')
    expect(hasCode(errorOf(fenced), FENCED)).toBe(true)
    expect(await count()).toBe(3)
  })

  it('a fence row deleted by hand: the next write is retry, and the retry raises it again and lands', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    expect((await sink.write(rowsBatch(1, [1]))).status).toBe('landed')
    await db.sql(`DELETE FROM ${db.schema}._skippr_fence`)
    const outcome = await sink.write(rowsBatch(2, [2]))
    expect(outcome.status).toBe('retry')
    expect(errorOf(outcome)?.message).toContain('fence row of pipeline p')
    expect((await sink.write(rowsBatch(2, [2]))).status).toBe('landed')
    expect((await db.sql(`SELECT token FROM ${db.schema}._skippr_fence`)).rows).toEqual([{ token: '1' }])
    expect(await count()).toBe(2)
  })

  it('a fenced writer gets the fence code', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    expect((await sink.write(csvBatch(1, '1,1,\n', 1, 9n))).status).toBe('landed')
    const outcome = await sink.write(csvBatch(2, '2,1,\n', 1, 8n))
    expect(outcome.status).toBe('fatal')
    expect(hasCode(errorOf(outcome), FENCED)).toBe(true)
    expect(errorOf(outcome)?.message).toContain('9 > 8')
  })
})

describe('definition', () => {
  it('declares exactly-once and its secret, and validates its config', () => {
    expect(definition.guarantee).toBe('exactly-once')
    expect(definition.secretFields).toEqual(['connection_string'])
    const at = { file: 'skippr.yml', path: 'data_sinks.pg.Postgres' }
    expect(parseConnectorConfig(definition, { connection_string: PG_URL }, at)).toEqual({
      connection_string: PG_URL,
      schema: 'public',
      concurrent_writes: 2,
    })
    expect(() =>
      parseConnectorConfig(definition, { connection_string: PG_URL, concurrent_writes: 0 }, at),
    ).toThrow('concurrent_writes')
    expect(() => parseConnectorConfig(definition, { connection_string: PG_URL, table: 'x' }, at)).toThrow(
      'unknown key table',
    )
  })
})
