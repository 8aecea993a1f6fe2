import { spawn } from 'node:child_process'
import { mkdir, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { allTypesSchema, makeBatch, rawPart, trickyRows } from '@skippr/conformance'
import type { Sink, WriteOutcome } from '@skippr/connector-api'
import { hasCode, parseConnectorConfig } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DUCKDB_FENCED, DUCKDB_REJECTED, DUCKDB_UNAVAILABLE, sink as definition } from '../src/index.js'
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
    const batch = (seq: number, fence: number) =>
      makeBatch({ pipeline: 'p', seq, fence, parts: [{ schema, format: 'jsonl', rows: trickyRows() }] })
    expect((await sink.write(batch(1, 9))).status).toBe('landed')
    const error = errorOf(await sink.write(batch(2, 8)))
    expect(hasCode(error, DUCKDB_FENCED)).toBe(true)
    expect(error.message).toMatch(/fence token 8 is older than 9/)
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
