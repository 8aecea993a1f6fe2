import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { NamespaceSchema, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import {
  encodeCsv,
  encodeJsonl,
  FENCED,
  hasCode,
  isPermanent,
  parseConnectorConfig,
  ROW_COUNT_MISMATCH,
  silentLogger,
  withoutRecords,
} from '@skippr/connector-api'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { lineInContext, recordAtLine } from '../src/copy-refusals.js'
import {
  sink as definition,
  NAME_TOO_LONG,
  PERMISSION_DENIED,
  PostgresSink,
  RESERVED_NAME,
  STATEMENT_REJECTED,
  UNAVAILABLE,
} from '../src/index.js'
import { copy } from '../src/load.js'
import { csvRecords } from '../src/refused-rows.js'
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
    expect(isPermanent(error)).toBe(true)
  })

  it('refuses a name longer than PostgreSQL keeps, instead of cutting two long names into one', async () => {
    // 64 bytes; PostgreSQL would keep the first 63, the same for both.
    const long = (end: string) => `${'é'.repeat(31)}x${end}`
    const wide: NamespaceSchema = {
      namespace: 'orders',
      fields: [
        { name: long('a'), type: 'int' },
        { name: long('b'), type: 'int' },
      ],
    }
    const error = await db
      .sink()
      .prepare(wide)
      .catch((e: unknown) => e)
    expect(hasCode(error, NAME_TOO_LONG)).toBe(true)
    expect(isPermanent(error)).toBe(true)
    expect((error as Error).message).toBe(
      `namespace orders: the name "${long('a')}" is 64 bytes, and PostgreSQL keeps only 63 (a longer name would be cut into another, or two into one): shorten it at the source`,
    )
  })
})

describe('failures', () => {
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
    await holder.query(`SELECT * FROM ${db.schema}._skippr_fences FOR UPDATE`)
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
    await db.sql(`DELETE FROM ${db.schema}._skippr_fences`)
    const outcome = await sink.write(rowsBatch(2, [2]))
    expect(outcome.status).toBe('retry')
    expect(errorOf(outcome)?.message).toContain('fence row of pipeline p')
    expect((await sink.write(rowsBatch(2, [2]))).status).toBe('landed')
    expect((await db.sql(`SELECT token FROM ${db.schema}._skippr_fences`)).rows).toEqual([{ token: '1' }])
    expect(await count()).toBe(2)
  })

  it('a fence table of the old name (_skippr_fence) is renamed, and its tokens still fence', async () => {
    await db.sql(`CREATE SCHEMA ${db.schema}`)
    await db.sql(`CREATE TABLE ${db.schema}._skippr_fence (pipeline text PRIMARY KEY, token bigint NOT NULL)`)
    await db.sql(`INSERT INTO ${db.schema}._skippr_fence VALUES ('p', 9)`)
    const sink = db.sink()
    await sink.prepare(orders)
    const outcome = await sink.write(csvBatch(1, '1,1,\n', 1, 8n))
    expect(outcome.status).toBe('fatal')
    expect(hasCode(errorOf(outcome), FENCED)).toBe(true)
    expect((await db.sql(`SELECT token FROM ${db.schema}._skippr_fences`)).rows).toEqual([{ token: '9' }])
    expect((await db.sql(`SELECT to_regclass('${db.schema}._skippr_fence') AS old`)).rows).toEqual([
      { old: null },
    ])
  })

  it('a fenced writer gets the fence code', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    expect((await sink.write(csvBatch(1, '1,1,\n', 1, 9n))).status).toBe('landed')
    const outcome = await sink.write(csvBatch(2, '2,1,\n', 1, 8n))
    expect(outcome.status).toBe('fatal')
    expect(hasCode(errorOf(outcome), FENCED)).toBe(true)
    expect(errorOf(outcome)?.message).toContain('fence token 8 is older than 9')
  })
})

/** The refused rows of an outcome as [part, row] pairs; any other outcome as it is. */
const refusedAt = (outcome: WriteOutcome) =>
  outcome.status === 'refused' ? outcome.rows.map((r) => [r.part, r.row]) : outcome

/** `batch` without the rows `outcome` refused, as the runner writes it again (deadletter.ts). */
function withoutRefused(batch: SinkBatch, outcome: WriteOutcome): SinkBatch {
  const refusedRows = outcome.status === 'refused' ? outcome.rows : []
  return {
    ...batch,
    parts: batch.parts.map((part, index) => {
      const rows = new Set(refusedRows.filter((r) => r.part === index).map((r) => r.row))
      return { ...part, body: withoutRecords(part.body, part.format, rows).body, rows: part.rows - rows.size }
    }),
  }
}

function part(format: 'csv' | 'jsonl', body: string | Uint8Array, rows: number): SinkBatch['parts'][number] {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body
  return { namespace: 'orders', schemaVersion: 1, format, rows, body: bytes, schema: orders }
}

const batchOf = (seq: number, ...parts: SinkBatch['parts']): SinkBatch => ({
  id: { pipeline: 'p', epoch: 'e1', seq: BigInt(seq) },
  fence: 1n,
  parts,
})

const landedIds = async () =>
  (await db.sql<{ id: string }>(`SELECT id FROM ${db.schema}.orders ORDER BY id`)).rows.map((r) =>
    Number(r.id),
  )

describe('rows the server refuses', () => {
  it('a value that does not convert: refused naming table, column and value; nothing written; the rest lands under the identity', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    const batch = csvBatch(1, '1,2,"ok"\n2,lots,"bad"\n3,4,\n', 3)
    const outcome = await sink.write(batch)
    expect(outcome).toEqual({
      status: 'refused',
      rows: [
        {
          part: 0,
          row: 1,
          code: '22P02',
          error: `"${db.schema}"."orders", column qty: invalid input syntax for type integer: "lots"`,
        },
      ],
    })
    expect(await count()).toBe(0)
    expect(await markers()).toBe(0)
    expect(await sink.write(withoutRefused(batch, outcome))).toEqual({ status: 'landed', rows: 2 })
    expect(await sink.write(batch)).toEqual({ status: 'already-landed' })
    expect(await landedIds()).toEqual([1, 3])
  })

  it('quoted newlines in the records before a refused one: the record index is named, not the line', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    const body = '1,1,"a\nb\nc"\n2,2,"x"\n3,3,"p\r\nq"\n4,four,\n5,5,"y\n"\n6,six,"r\ns"\n7,7,\n'
    const batch = csvBatch(1, body, 7)
    const outcome = await sink.write(batch)
    expect(refusedAt(outcome)).toEqual([
      [0, 3],
      [0, 5],
    ])
    expect(await sink.write(withoutRefused(batch, outcome))).toEqual({ status: 'landed', rows: 5 })
    const { rows } = await db.sql(`SELECT id::int, note FROM ${db.schema}.orders ORDER BY id`)
    expect(rows).toEqual([
      { id: 1, note: 'a\nb\nc' },
      { id: 2, note: 'x' },
      { id: 3, note: 'p\r\nq' },
      { id: 5, note: 'y\n' },
      { id: 7, note: null },
    ])
  })

  it('PostgreSQL 15 numbers COPY lines as recordAtLine reads them: quoted newlines count after the first record', async () => {
    await db.sql(`CREATE SCHEMA ${db.schema}`)
    await db.sql(`CREATE TABLE ${db.schema}.numbered (id int UNIQUE, v text, q int)`)
    const sql = `COPY ${db.schema}.numbered FROM STDIN WITH (FORMAT csv)`
    const multiLine = Array.from({ length: 1500 }, (_, i) => `${i + 10},"v\n${i}",1\n`).join('')
    const cases: [string | Buffer, number][] = [
      ['1,"a\nb\nc",1\n2,x,1\n3,y,zz\n', 2],
      ['1,"a\nb\nc",1\n2,x,1\n3,"p\nq\nr",1\n4,y,zz\n', 3],
      // A duplicate key fails when COPY flushes its buffer of rows, after the records that follow.
      [`1,"a\nb",1\n${multiLine}12,dup,1\n99,x,1\n`, 1501],
      [
        Buffer.concat([
          Buffer.from('1,"a\nb",1\n2,"c\nd",1\n3,"'),
          Buffer.from([0xff]),
          Buffer.from('\ne",1\n'),
        ]),
        2,
      ],
    ]
    for (const [body, record] of cases) {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body
      const error = await copy(db.client, sql, bytes).catch((e: unknown) => e)
      const records = csvRecords(bytes)
      const line = lineInContext(error, 'numbered')
      expect(line, String(error)).toBeDefined()
      expect(recordAtLine(records, 0, records.count, line ?? 0), JSON.stringify(String(body))).toBe(record)
    }
  })

  it('NOT NULL and CHECK violations (class 23) are refused, naming the column or the constraint', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    await db.sql(`ALTER TABLE ${db.schema}.orders ADD CONSTRAINT qty_positive CHECK (qty >= 0)`)
    await db.sql(`ALTER TABLE ${db.schema}.orders ALTER COLUMN note SET NOT NULL`)
    const csv = part('csv', '1,1,a\n2,-5,b\n3,3,\n4,4,d\n', 4)
    const jsonl = part(
      'jsonl',
      '{"id":5,"qty":-1,"note":"e"}\n{"id":6,"qty":6}\n{"id":7,"qty":7,"note":"g"}\n',
      3,
    )
    const batch = batchOf(1, csv, jsonl)
    const outcome = await sink.write(batch)
    expect(outcome).toEqual({
      status: 'refused',
      rows: [
        { part: 0, row: 1, code: '23514', error: expect.stringContaining('check constraint "qty_positive"') },
        {
          part: 0,
          row: 2,
          code: '23502',
          error: expect.stringContaining('column note: null value in column "note"'),
        },
        {
          part: 1,
          row: 0,
          code: '23514',
          error: expect.stringContaining('(Failing row contains (5, -1, e).)'),
        },
        { part: 1, row: 1, code: '23502', error: expect.stringContaining('column note') },
      ],
    })
    expect(await count()).toBe(0)
    expect(await sink.write(withoutRefused(batch, outcome))).toEqual({ status: 'landed', rows: 3 })
    expect(await landedIds()).toEqual([1, 4, 7])
  })

  it('a duplicate key is refused where the batch without the refused rows would refuse it', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    await db.sql(`CREATE UNIQUE INDEX ON ${db.schema}.orders (id)`)
    expect(await sink.write(csvBatch(1, '1,1,\n', 1))).toEqual({ status: 'landed', rows: 1 })
    // Row 0 repeats a landed id, row 2 repeats row 1's, and part 1 row 1 repeats part 0 row 3's.
    const batch = batchOf(
      2,
      part('csv', '1,1,\n2,2,\n2,2,\n3,3,\n', 4),
      part('jsonl', '{"id":4}\n{"id":3}\n', 2),
    )
    const outcome = await sink.write(batch)
    expect(outcome).toMatchObject({
      status: 'refused',
      rows: [
        { part: 0, row: 0, code: '23505', error: expect.stringContaining('(Key (id)=(1) already exists.)') },
        { part: 0, row: 2, code: '23505' },
        { part: 1, row: 1, code: '23505' },
      ],
    })
    expect(await sink.write(withoutRefused(batch, outcome))).toEqual({ status: 'landed', rows: 3 })
    expect(await landedIds()).toEqual([1, 2, 3, 4])
  })

  it('50 refused rows of 2,000 in a csv part and 50 of 2,000 in a jsonl part: every one named', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    const bad = (i: number) => i % 40 === 17
    const csvLines = Array.from({ length: 2000 }, (_, i) => {
      const qty = !bad(i) ? `${i}` : i % 80 === 17 ? `x${i}` : '99999999999'
      return `${i},${qty},"n${i}${i % 3 === 0 ? '\nmore' : ''}"\n`
    })
    const jsonLines = Array.from({ length: 2000 }, (_, i) => {
      const id = 10_000 + i
      const line = !bad(i)
        ? JSON.stringify({ id, qty: i, note: i % 3 ? `n${i}` : 'a\nb' })
        : i % 120 === 17
          ? `{"id":${id},`
          : JSON.stringify({ id, qty: i % 80 === 17 ? 'many' : 2 ** 40 })
      // Blank lines are not records, and must not shift the indexes.
      return i % 100 === 0 ? `${line}\n\n` : `${line}\n`
    })
    const batch = batchOf(1, part('csv', csvLines.join(''), 2000), part('jsonl', jsonLines.join(''), 2000))
    const outcome = await sink.write(batch)
    const expectedRows = Array.from({ length: 2000 }, (_, i) => i).filter(bad)
    expect(expectedRows.length).toBe(50)
    expect(refusedAt(outcome)).toEqual([
      ...expectedRows.map((i) => [0, i]),
      ...expectedRows.map((i) => [1, i]),
    ])
    for (const row of outcome.status === 'refused' ? outcome.rows : []) {
      const notJson = row.part === 1 && row.row % 120 === 17
      expect(row.error, JSON.stringify(row)).toContain(
        notJson ? 'invalid input syntax for type json' : 'column qty',
      )
      expect(row.code).toMatch(/^22/)
    }
    expect(await count()).toBe(0)
    expect(await sink.write(withoutRefused(batch, outcome))).toEqual({ status: 'landed', rows: 3900 })
    expect(await count()).toBe(3900)
  })

  it('a refused row at the start of a 10 MB csv body: refused, the process and the connection carry on', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    // The server refuses the COPY while most of the body is still to be sent.
    const rows = Array.from(
      { length: 400_000 },
      (_, i) => `${i},${i === 1 ? 'x' : i % 7},"note ${i} ${'x'.repeat(16)}"\n`,
    )
    const batch = csvBatch(1, rows.join(''), rows.length)
    expect(batch.parts[0]?.body.length).toBeGreaterThan(10_000_000)
    const outcome = await sink.write(batch)
    expect(refusedAt(outcome)).toEqual([[0, 1]])
    expect(await sink.write(withoutRefused(batch, outcome))).toEqual({
      status: 'landed',
      rows: rows.length - 1,
    })
  })

  it('JSON lines: not JSON, a value that does not convert, bytes that are not UTF-8, not an object: each refused', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    const body = Buffer.concat([
      Buffer.from('{"id":1,"qty":1}\n{"id":2,"qty":\n\n{"id":3,"qty":"many","note":"x"}\n{"id":4,"note":"'),
      Buffer.from([0xff]),
      Buffer.from('"}\n[5]\nnot json at all\n  \n{"id":7,"qty":7}\n'),
    ])
    const batch = batchOf(1, part('jsonl', body, 7))
    const outcome = await sink.write(batch)
    const table = `"${db.schema}"."orders"`
    expect(outcome).toEqual({
      status: 'refused',
      rows: [
        {
          part: 0,
          row: 1,
          code: '22P02',
          error: `${table}: invalid input syntax for type json (The input string ended unexpectedly.)`,
        },
        {
          part: 0,
          row: 2,
          code: '22P02',
          error: `${table}, column qty: invalid input syntax for type integer: "many"`,
        },
        {
          part: 0,
          row: 3,
          code: '22021',
          error: expect.stringContaining('invalid byte sequence for encoding "UTF8": 0xff'),
        },
        {
          part: 0,
          row: 4,
          code: expect.stringMatching(/^22/),
          error: expect.stringContaining('on an array'),
        },
        {
          part: 0,
          row: 5,
          code: '22P02',
          error: expect.stringContaining(`${table}: invalid input syntax for type json`),
        },
      ],
    })
    expect(await sink.write(withoutRefused(batch, outcome))).toEqual({ status: 'landed', rows: 2 })
    expect(await landedIds()).toEqual([1, 7])
  })
})

const lines: NamespaceSchema = { namespace: 'lines', fields: [{ name: 'v', type: 'string' }] }

function linesBatch(seq: number, format: 'csv' | 'jsonl', body: string, rows: number): SinkBatch {
  return {
    id: { pipeline: 'p', epoch: 'e1', seq: BigInt(seq) },
    fence: 1n,
    parts: [
      {
        namespace: 'lines',
        schemaVersion: 1,
        format,
        rows,
        body: new TextEncoder().encode(body),
        schema: lines,
      },
    ],
  }
}

const values = async () => (await db.sql(`SELECT v FROM ${db.schema}.lines`)).rows.map((r) => r.v)

describe('a line holding only \\. (the end of COPY data)', () => {
  it('lands as the text \\. in csv, and the rows after it land too', async () => {
    const sink = db.sink()
    expect(await sink.write(linesBatch(1, 'csv', 'a\n\\.\nb\nc\n', 4))).toEqual({ status: 'landed', rows: 4 })
    expect(await values()).toEqual(['a', '\\.', 'b', 'c'])
  })

  it('lands exactly as the first line, after CRLF, in CRLF and CR bodies, and as the last line', async () => {
    const sink = db.sink()
    const bodies: [string, number][] = [
      ['\\.\nb\n', 2],
      ['a\r\n\\.\r\nb\r\n', 3],
      ['a\r\\.\rb\r', 3],
      ['a\n\\.\n', 2],
      ['a\n\\.', 2],
    ]
    for (const [i, [body, rows]] of bodies.entries())
      expect(await sink.write(linesBatch(i + 1, 'csv', body, rows)), JSON.stringify(body)).toEqual({
        status: 'landed',
        rows,
      })
    expect(await values()).toEqual(['\\.', 'b', 'a', '\\.', 'b', 'a', '\\.', 'b', 'a', '\\.', 'a', '\\.'])
  })

  it('inside a quoted value spanning lines it is data, and stays exactly that value', async () => {
    const sink = db.sink()
    const body = '"x\n\\.\ny"\n"p""\r\n\\.\r\n""q"\n\\.\nz\n'
    expect(await sink.write(linesBatch(1, 'csv', body, 4))).toEqual({ status: 'landed', rows: 4 })
    expect(await values()).toEqual(['x\n\\.\ny', 'p"\r\n\\.\r\n"q', '\\.', 'z'])
  })

  it('in JSON lines it is not JSON: that row is refused, nothing lands', async () => {
    const sink = db.sink()
    const outcome = await sink.write(linesBatch(1, 'jsonl', '{"v":"a"}\n\\.\n{"v":"b"}\n', 3))
    expect(outcome).toEqual({
      status: 'refused',
      rows: [
        {
          part: 0,
          row: 1,
          code: '22P02',
          error: expect.stringContaining('invalid input syntax for type json'),
        },
      ],
    })
    expect(await count('lines')).toBe(0)
    // The text \\. inside a JSON string is an ordinary value.
    const escaped = '{"v":"\\\\."}\n'
    expect(await sink.write(linesBatch(2, 'jsonl', escaped, 1))).toEqual({ status: 'landed', rows: 1 })
    expect(await values()).toEqual(['\\.'])
  })
})

describe('row count check', () => {
  it('a csv batch declaring more rows than it holds is fatal, names table, batch and counts; nothing lands', async () => {
    const sink = db.sink()
    await sink.prepare(orders)
    const outcome = await sink.write(csvBatch(1, '1,2,"a"\n2,3,"b"\n', 3))
    expect(outcome.status).toBe('fatal')
    const error = errorOf(outcome)
    expect(error).toMatchObject({
      code: ROW_COUNT_MISMATCH,
      expected: 3,
      loaded: 2,
      batch: 'p/e1/000000000001',
    })
    expect(error?.message).toContain(`table "${db.schema}"."orders", batch p/e1/000000000001`)
    expect(error?.message).toContain('declares 3 rows but 2 were loaded')
    expect(await count()).toBe(0)
    expect(await markers()).toBe(0)
    // Nothing of it was recorded: the corrected batch lands under the same identity.
    expect(await sink.write(csvBatch(1, '1,2,"a"\n2,3,"b"\n', 2))).toEqual({ status: 'landed', rows: 2 })
  })

  it('a jsonl part holding more rows than declared, after a good part: fatal, no part lands', async () => {
    const sink = db.sink()
    const good = csvBatch(1, '1,2,"a"\n', 1).parts[0]!
    const outcome = await sink.write({
      ...linesBatch(1, 'jsonl', '{"v":"a"}\n{"v":"b"}\n', 1),
      parts: [good, linesBatch(1, 'jsonl', '{"v":"a"}\n{"v":"b"}\n', 1).parts[0]!],
    })
    expect(errorOf(outcome)).toMatchObject({ code: ROW_COUNT_MISMATCH, expected: 1, loaded: 2 })
    expect(await count()).toBe(0)
    expect(await count('lines')).toBe(0)
    expect(await markers()).toBe(0)
    // The connection went back to the pool healthy, its staging table forgotten with the rollback.
    expect(await sink.write(linesBatch(2, 'jsonl', '{"v":"c"}\n', 1))).toEqual({ status: 'landed', rows: 1 })
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
