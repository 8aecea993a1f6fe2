import { spawn } from 'node:child_process'
import { mkdir, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { allTypesSchema, makeBatch, rawPart, trickyRows } from '@skippr/conformance'
import type { NamespaceSchema, Sink, WriteOutcome } from '@skippr/connector-api'
import { hasCode, parseConnectorConfig } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  DUCKDB_FENCED,
  DUCKDB_REJECTED,
  DUCKDB_UNAVAILABLE,
  DuckdbSink,
  sink as definition,
} from '../src/index.js'
import { query, type TempWarehouse, tempWarehouse } from './helpers.js'

let warehouse: TempWarehouse
const opened: Sink[] = []
const open = (schema?: string) => {
  const sink = warehouse.sink(schema)
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

function errorOf(outcome: WriteOutcome): Error {
  if (!('error' in outcome)) throw new Error(`expected an error, got ${outcome.status}`)
  return outcome.error
}

/** Batch `seq` of pipeline `p`: the conformance suite's tricky rows for `schema`, in one part. */
function trickyBatch(schema: NamespaceSchema, seq: number, format: 'csv' | 'jsonl' = 'csv', fence = 1) {
  return makeBatch({ pipeline: 'p', seq, fence, parts: [{ schema, format, rows: trickyRows() }] })
}

describe('DuckdbSink', () => {
  it('records every landed batch in _skippr_batches in the same file', async () => {
    const schema = allTypesSchema('rentals')
    const sink = open()
    await sink.prepare(schema)
    await sink.write(
      makeBatch({
        pipeline: 'bikehire',
        epoch: 'e1',
        seq: 41,
        parts: [{ schema, format: 'csv', rows: trickyRows() }],
      }),
    )
    const markers = await query(
      warehouse.file,
      'SELECT pipeline, epoch, seq, landed_at FROM main._skippr_batches',
    )
    expect(markers).toEqual([{ pipeline: 'bikehire', epoch: 'e1', seq: 41n, landed_at: expect.any(Date) }])
  })

  it('creates columns with the documented DuckDB types', async () => {
    const sink = open()
    await sink.prepare(allTypesSchema('typed'))
    const columns = await query(
      warehouse.file,
      "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'typed' ORDER BY column_index",
    )
    expect(columns.map((c) => `${c.column_name} ${c.data_type}`)).toEqual([
      'id BIGINT',
      'name VARCHAR',
      'qty INTEGER',
      'price DOUBLE',
      'active BOOLEAN',
      'day DATE',
      'at TIMESTAMP WITH TIME ZONE',
      'doc JSON',
      'note VARCHAR',
    ])
  })

  it('evolves a table whose schema and name hold quotes (looked up with SQL literals)', async () => {
    const sink = open("it's")
    const v1: NamespaceSchema = { namespace: "o'brien", fields: [{ name: 'id', type: 'long' }] }
    await sink.prepare(v1)
    await sink.prepare({ ...v1, fields: [...v1.fields, { name: 'note', type: 'string' }] })
    const columns = await query(
      warehouse.file,
      "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'it''s' AND table_name = 'o''brien'",
    )
    expect(columns.map((c) => c.column_name)).toEqual(['id', 'note'])
  })

  it('a value that cannot be cast is fatal, names the table and the value', async () => {
    const schema = allTypesSchema('orders')
    const sink = open()
    await sink.prepare(schema)
    const outcome = await sink.write(
      makeBatch({ pipeline: 'p', seq: 1, parts: [rawPart(schema, 'csv', '1,"a",12x,,,,,,\n', 1)] }),
    )
    expect(outcome.status).toBe('fatal')
    const error = errorOf(outcome)
    expect(hasCode(error, DUCKDB_REJECTED)).toBe(true)
    expect(error.message).toContain('table "main"."orders"')
    expect(error.message).toContain('12x')
  })

  it('a lower fence token is fatal with its own code', async () => {
    const schema = allTypesSchema('fenced')
    const sink = open()
    await sink.prepare(schema)
    const batch = (seq: number, fence: number) => trickyBatch(schema, seq, 'jsonl', fence)
    expect((await sink.write(batch(1, 9))).status).toBe('landed')
    const error = errorOf(await sink.write(batch(2, 8)))
    expect(hasCode(error, DUCKDB_FENCED)).toBe(true)
    expect(error.message).toMatch(/fence token 8 is older than 9/)
  })

  it('raises the fence for a retried batch that landed before, so the writer it deposed is refused', async () => {
    const schema = allTypesSchema('refenced')
    const sink = open()
    await sink.prepare(schema)
    expect((await sink.write(trickyBatch(schema, 1, 'csv', 1))).status).toBe('landed')
    expect((await sink.write(trickyBatch(schema, 1, 'csv', 2))).status).toBe('already-landed')
    expect(hasCode(errorOf(await sink.write(trickyBatch(schema, 2, 'csv', 1))), DUCKDB_FENCED)).toBe(true)
  })

  it("keeps a pipeline's identities and fence apart from another's whose name differs only by quoting", async () => {
    // Identities and tokens are written into the ledger statements as SQL literals.
    const schema = allTypesSchema('quoted')
    const sink = open()
    await sink.prepare(schema)
    const batch = (pipeline: string, fence: number) =>
      makeBatch({
        pipeline,
        epoch: "e'1",
        seq: 1,
        fence,
        parts: [{ schema, format: 'csv', rows: trickyRows() }],
      })
    expect((await sink.write(batch("o'brien", 5))).status).toBe('landed')
    expect((await sink.write(batch("o'brien", 5))).status).toBe('already-landed')
    expect((await sink.write(batch("o''brien", 1))).status).toBe('landed')
    expect(hasCode(errorOf(await sink.write(batch("o'brien", 4))), DUCKDB_FENCED)).toBe(true)
    const ledger = await query(
      warehouse.file,
      'SELECT b.pipeline, b.epoch, f.fence FROM main._skippr_batches b JOIN main._skippr_fences f USING (pipeline) ORDER BY f.fence',
    )
    expect(ledger).toEqual([
      { pipeline: "o''brien", epoch: "e'1", fence: 1n },
      { pipeline: "o'brien", epoch: "e'1", fence: 5n },
    ])
  })

  it('two sinks racing on one identity in one process: it lands once, the loser retries into already-landed', async () => {
    const schema = allTypesSchema('race')
    const [a, b] = [open(), open()]
    await a.prepare(schema)
    await b.prepare(schema)
    const batch = makeBatch({
      pipeline: 'p',
      seq: 1,
      parts: [{ schema, format: 'jsonl', rows: trickyRows() }],
    })
    const outcomes = await Promise.all([a.write(batch), b.write(batch)])
    const losers = outcomes.filter((o) => o.status !== 'landed')
    expect(losers).toHaveLength(1)
    expect(['already-landed', 'retry']).toContain(losers[0]?.status)
    expect((await b.write(batch)).status).toBe('already-landed')
    const [count] = await query(warehouse.file, 'SELECT count(*) AS n FROM main.race')
    expect(count).toEqual({ n: 5n })
  })

  it('writes that queue up land together: one transaction, each identity once, every format', async () => {
    const schema = allTypesSchema('grouped')
    const sink = open()
    await sink.prepare(schema)
    const batches = [trickyBatch(schema, 1), trickyBatch(schema, 2, 'jsonl'), trickyBatch(schema, 3)]
    expect(sink.concurrentWrites).toBe(3)
    const outcomes = await Promise.all(batches.map((b) => sink.write(b)))
    expect(outcomes).toEqual([1, 2, 3].map(() => ({ status: 'landed', rows: trickyRows().length })))
    // now() is the transaction's start: one value means one transaction.
    const landedAt = await query(warehouse.file, 'SELECT DISTINCT landed_at FROM main._skippr_batches')
    expect(landedAt).toHaveLength(1)
    expect(await query(warehouse.file, 'SELECT count(*) AS n FROM main.grouped')).toEqual([
      { n: BigInt(3 * trickyRows().length) },
    ])
    const again = await Promise.all(batches.map((b) => sink.write(b)))
    expect(again.map((o) => o.status)).toEqual(['already-landed', 'already-landed', 'already-landed'])
  })

  it('a queued group checks each identity and the fence in order: landed ones are skipped, a new token raised once', async () => {
    const schema = allTypesSchema('mixed')
    const sink = open()
    await sink.prepare(schema)
    const batch = (seq: number, fence: number) => trickyBatch(schema, seq, 'csv', fence)
    expect((await sink.write(batch(1, 1))).status).toBe('landed')
    const group = await Promise.all([batch(1, 2), batch(2, 2), batch(3, 2)].map((b) => sink.write(b)))
    expect(group.map((o) => o.status)).toEqual(['already-landed', 'landed', 'landed'])
    expect(await query(warehouse.file, 'SELECT fence FROM main._skippr_fences')).toEqual([{ fence: 2n }])
    // A deposed writer's batch queued after a current one: the group fails, each is tried alone.
    const fenced = await Promise.all([batch(4, 2), batch(5, 1)].map((b) => sink.write(b)))
    expect(fenced.map((o) => o.status)).toEqual(['landed', 'fatal'])
    expect(hasCode(errorOf(fenced[1]!), DUCKDB_FENCED)).toBe(true)
    expect(await query(warehouse.file, 'SELECT seq FROM main._skippr_batches ORDER BY seq')).toEqual(
      [1n, 2n, 3n, 4n].map((seq) => ({ seq })),
    )
    expect(await query(warehouse.file, 'SELECT count(*) AS n FROM main.mixed')).toEqual([
      { n: BigInt(4 * trickyRows().length) },
    ])
  })

  it('a write queued behind a landing waits for the next one and lands with it', async () => {
    const schema = allTypesSchema('lingered')
    const sink = open()
    await sink.prepare(schema)
    const batch = (seq: number) => trickyBatch(schema, seq)
    const first = sink.write(batch(1))
    // The first is landing (it waits on DuckDB's threads) when the second arrives.
    await new Promise(setImmediate)
    const second = sink.write(batch(2))
    // As the runner does: the next write goes out a few milliseconds after a landing ends (it is
    // read from the WAL first), within the linger.
    await first
    await sleep(5)
    const third = sink.write(batch(3))
    await Promise.all([second, third])
    const rows = await query(warehouse.file, 'SELECT seq, landed_at FROM main._skippr_batches ORDER BY seq')
    const landedAt = rows.map((r) => (r.landed_at as Date).getTime())
    expect(landedAt[1]).toBe(landedAt[2])
    expect(landedAt[0]).not.toBe(landedAt[1])
    // A lone write behind a landing does not wait longer than the linger.
    const fourth = sink.write(batch(4))
    await new Promise(setImmediate)
    const fifth = sink.write(batch(5))
    await fourth
    const started = Date.now()
    expect((await fifth).status).toBe('landed')
    expect(Date.now() - started).toBeLessThan(1_000)
  })

  it('a write that arrives during a landing is written to its load file before the landing ends', async () => {
    const schema: NamespaceSchema = {
      namespace: 'spooled',
      fields: [
        { name: 'id', type: 'long', nullable: false },
        { name: 'text', type: 'string', nullable: true },
      ],
      primaryKey: ['id'],
    }
    const sink = open()
    await sink.prepare(schema)
    const rows = 300_000
    const body = Array.from(
      { length: rows },
      (_, i) => `${i},row ${i} of a batch long enough to load for a while\n`,
    )
    const big = makeBatch({ pipeline: 'p', seq: 1, parts: [rawPart(schema, 'csv', body.join(''), rows)] })
    const small = makeBatch({ pipeline: 'p', seq: 2, parts: [rawPart(schema, 'csv', '-1,last\n', 1)] })
    const tmp = path.join(warehouse.dir, 'data', 'tmp')
    const loadFiles = async () => {
      const [dir] = await readdir(tmp).catch(() => [])
      return dir === undefined ? [] : readdir(path.join(tmp, dir))
    }
    let firstSettled = false
    const first = sink.write(big).finally(() => (firstSettled = true))
    while ((await loadFiles()).length < 1) await sleep(1)
    const second = sink.write(small)
    while ((await loadFiles()).length < 2 && !firstSettled) await sleep(1)
    expect(firstSettled).toBe(false)
    expect(await first).toEqual({ status: 'landed', rows })
    expect(await second).toEqual({ status: 'landed', rows: 1 })
    expect(await loadFiles()).toEqual([])
  })

  it('a load file that cannot be written makes the write a retry naming it', async () => {
    const schema = allTypesSchema('unspooled')
    const sink = open()
    await sink.prepare(schema)
    const tmp = path.join(warehouse.dir, 'data', 'tmp')
    await rm(tmp, { recursive: true })
    const outcome = await sink.write(trickyBatch(schema, 1))
    expect(outcome.status).toBe('retry')
    expect(errorOf(outcome).message).toMatch(/load files of batch p\/epoch-1\/0+1 .*ENOENT/)
  })

  it('a queued group with a rejected batch: each is tried alone and gets its own outcome', async () => {
    const schema = allTypesSchema('orders')
    const sink = open()
    await sink.prepare(schema)
    const good = (seq: number) => trickyBatch(schema, seq)
    const bad = makeBatch({ pipeline: 'p', seq: 2, parts: [rawPart(schema, 'csv', '1,"a",12x,,,,,,\n', 1)] })
    const outcomes = await Promise.all([good(1), bad, good(3)].map((b) => sink.write(b)))
    expect(outcomes.map((o) => o.status)).toEqual(['landed', 'fatal', 'landed'])
    expect(hasCode(errorOf(outcomes[1]!), DUCKDB_REJECTED)).toBe(true)
    expect(await query(warehouse.file, 'SELECT seq FROM main._skippr_batches ORDER BY seq')).toEqual([
      { seq: 1n },
      { seq: 3n },
    ])
    expect(await query(warehouse.file, 'SELECT count(*) AS n FROM main.orders')).toEqual([
      { n: BigInt(2 * trickyRows().length) },
    ])
  })

  it('a set-up that fails after connecting is retried, and each retry fails again at once', async () => {
    // DuckDB refuses the setting once the connection is open; before the fix, the next open of the
    // file spun for ever in DuckDB's instance cache, held by the connection left open.
    const sink = new DuckdbSink(
      { path: 'warehouse.duckdb', schema: 'main', threads: 0 },
      { configDir: warehouse.dir, dataDir: path.join(warehouse.dir, 'data') },
    )
    opened.push(sink)
    const batch = makeBatch({ pipeline: 'p', seq: 1, parts: [rawPart(allTypesSchema('t'), 'csv', '', 0)] })
    const started = Date.now()
    for (let attempt = 0; attempt < 3; attempt++) {
      const outcome = await sink.write(batch)
      expect(outcome.status).toBe('retry')
      expect(hasCode(errorOf(outcome), DUCKDB_UNAVAILABLE)).toBe(true)
    }
    // Each attempt takes milliseconds; the spin lasted until a garbage collection freed the
    // connection (seconds in a test, for ever in an idle sync).
    expect(Date.now() - started).toBeLessThan(3_000)
  }, 30_000)

  it('a file locked by another process: the write is retry, and lands once the lock is gone', async () => {
    const schema = allTypesSchema('locked')
    const first = open()
    await first.prepare(schema)
    await first.close()

    const holder = spawn(
      process.execPath,
      [path.join(import.meta.dirname, 'fixtures', 'hold-lock.mjs'), warehouse.file],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    try {
      await new Promise((resolve) => holder.stdout.once('data', resolve))
      const sink = open()
      const batch = makeBatch({
        pipeline: 'p',
        seq: 1,
        parts: [{ schema, format: 'csv', rows: trickyRows() }],
      })
      const outcome = await sink.write(batch)
      expect(outcome.status).toBe('retry')
      expect(hasCode(errorOf(outcome), DUCKDB_UNAVAILABLE)).toBe(true)
      expect(errorOf(outcome).message).toContain(warehouse.file)
      holder.kill('SIGKILL')
      await new Promise((resolve) => holder.once('exit', resolve))
      expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 5 })
    } finally {
      holder.kill('SIGKILL')
    }
  })

  it('leaves no load files behind, and removes those of processes that died mid-load', async () => {
    const tmp = path.join(warehouse.dir, 'data', 'tmp')
    const orphan = path.join(tmp, 'sink-duckdb-999999999-abc')
    await mkdir(orphan, { recursive: true })
    const schema = allTypesSchema('tidy')
    const sink = open()
    await sink.prepare(schema)
    await sink.write(
      makeBatch({ pipeline: 'p', seq: 1, parts: [{ schema, format: 'csv', rows: trickyRows() }] }),
    )
    const dirs = await readdir(tmp)
    expect(dirs).toHaveLength(1)
    expect(dirs[0]).toMatch(new RegExp(`^sink-duckdb-${process.pid}-`))
    expect(await readdir(path.join(tmp, dirs[0] as string))).toEqual([])
    await sink.close()
    expect(await readdir(tmp)).toEqual([])
  })

  it('loads under its memory limit and threads, returns freed memory, and leaves row groups unmerged at checkpoints', async () => {
    const settings =
      "SELECT current_setting('memory_limit') AS memory, current_setting('max_vacuum_tasks') AS vacuum, " +
      "current_setting('allocator_bulk_deallocation_flush_threshold') AS flush"
    await open().prepare(allTypesSchema('t'))
    expect(await query(warehouse.file, settings)).toEqual([
      { memory: '244.1 MiB', vacuum: 0n, flush: '30.5 MiB' },
    ])
    for (const sink of opened.splice(0)) await sink.close()

    const sink = definition.create(
      { path: 'warehouse.duckdb', schema: 'main', memory_limit: '100MB', threads: 1 },
      { configDir: warehouse.dir, dataDir: '', pipeline: 'p', logger: console },
    ) as Sink
    opened.push(sink)
    await sink.prepare(allTypesSchema('t'))
    expect(await query(warehouse.file, `${settings}, current_setting('threads') AS threads`)).toEqual([
      { memory: '95.3 MiB', vacuum: 0n, flush: '30.5 MiB', threads: 1n },
    ])
  })

  it('creates the parent directory of a new database file', async () => {
    const sink = definition.create(
      { path: 'nested/dir/w.duckdb', schema: 'main' },
      { configDir: warehouse.dir, dataDir: '', pipeline: 'p', logger: console },
    ) as Sink
    opened.push(sink)
    await sink.prepare(allTypesSchema('t'))
    expect(await readdir(path.join(warehouse.dir, 'nested', 'dir'))).toContain('w.duckdb')
  })
})

describe('Duckdb config', () => {
  const at = { file: 'skippr.yml', path: 'data_sinks.warehouse.Duckdb' }

  it('defaults the schema to main', () => {
    expect(parseConnectorConfig(definition, { path: './w.duckdb' }, at)).toEqual({
      path: './w.duckdb',
      schema: 'main',
    })
  })

  it('takes a memory limit as a size and threads as a positive integer', () => {
    const config = { path: './w.duckdb', memory_limit: '1.5GiB', threads: 2 }
    expect(parseConnectorConfig(definition, config, at)).toEqual({ ...config, schema: 'main' })
    expect(() => parseConnectorConfig(definition, { path: 'w', memory_limit: 'lots' }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Duckdb.memory_limit: a size such as 256MB or 1GiB',
    )
    expect(() => parseConnectorConfig(definition, { path: 'w', threads: 0 }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Duckdb.threads:',
    )
  })

  it('rejects unknown keys and a missing path with the config path', () => {
    expect(() => parseConnectorConfig(definition, { path: 'w', file: 'x' }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Duckdb: unknown key file',
    )
    expect(() => parseConnectorConfig(definition, {}, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Duckdb.path:',
    )
  })
})
