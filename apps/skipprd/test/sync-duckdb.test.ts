/** `skipprd sync` end to end, as a user runs it: Sample → a real DuckDB file. */
import { copyFile } from 'node:fs/promises'
import path from 'node:path'
import { openStateStore } from '@skippr/state'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { query, rentalCounts, writeParquet } from './support/duckdb.js'
import { EVOLVING_ENV, EVOLVING_EXPECTED, evolvingCounts, writeEvolvingItems } from './support/evolving.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const ROWS = 20_000

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: ROWS }))
})
afterEach(async () => {
  await p.remove()
})

const warehouse = () => path.join(p.dir, 'warehouse.duckdb')
const syncOnce = (args: string[] = [], env: Record<string, string> = {}) =>
  runCli(['sync', '--pipeline', 'bikehire', '--once', ...args], { cwd: p.dir, env })

describe('sync --once into DuckDB', () => {
  it('lands every sample row once, printing the seed lines; a rerun lands nothing twice', async () => {
    const first = await syncOnce(['--output', 'text'])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(
      new RegExp(
        [
          '^Sync started: pipeline=bikehire',
          '\\[start\\] Ingesting',
          '\\[done\\]  Ingesting',
          '\\[start\\] Finalising',
          '\\[done\\]  Finalising',
          `Sync complete: pipeline=bikehire namespaces=1 rows=${ROWS} elapsed=\\d+ms\n$`,
        ].join('\n'),
      ),
    )
    expect(await rentalCounts(warehouse())).toEqual({ rows: ROWS, unique: ROWS })
    const [first10] = await query(
      warehouse(),
      'SELECT min(rental_id) AS lo, max(rental_id) AS hi FROM main.rentals',
    )
    expect(Number(first10?.hi) - Number(first10?.lo) + 1).toBe(ROWS)

    const again = await syncOnce(['--output', 'text'])
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/Sync complete: pipeline=bikehire namespaces=1 rows=0 elapsed=\d+ms\n$/)
    expect(await rentalCounts(warehouse())).toEqual({ rows: ROWS, unique: ROWS })
  })

  it('a column that appears mid-run is added between grouped loads: every row once, the new values kept', async () => {
    await writeEvolvingItems(p, 'Duckdb: { path: ./warehouse.duckdb }')
    const run = await syncOnce(['--output', 'text'], EVOLVING_ENV)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const [counts] = await query(warehouse(), evolvingCounts('main.items'))
    expect(counts).toEqual(EVOLVING_EXPECTED)
  })

  it('lands a Parquet file with every value as the file holds it; a rerun lands nothing twice', async () => {
    const source = path.join(p.dir, 'orders.parquet')
    await writeParquet(
      source,
      `SELECT i::INTEGER AS id, 'order "' || i || '",' || chr(10) || 'note' AS name,
         ((i * 7919) / 100)::DECIMAL(12, 2) AS amount,
         TIMESTAMP '2024-02-29 12:00:00' + to_microseconds(i * 1000003) AS at,
         DATE '2024-01-01' + (i % 400)::INTEGER AS day, ['a' || i, NULL] AS tags
       FROM range(5000) r(i)`,
    )
    await p.write(
      'skippr.yml',
      [
        'data_sources: { orders: { File: { path: orders.parquet, format: parquet } } }',
        'data_sinks: { warehouse: { Duckdb: { path: ./warehouse.duckdb } } }',
        'pipelines: { bikehire: { data_source: data_sources.orders, data_sink: data_sinks.warehouse } }',
        '',
      ].join('\n'),
    )
    const run = await syncOnce(['--output', 'text'])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const [same] = await query(
      warehouse(),
      `SELECT count(*) AS rows,
         count(*) FILTER (WHERE w.name = s.name AND w.amount = s.amount::DOUBLE
           AND epoch_us(w.at) = epoch_us(s.at) AND w.day = s.day
           AND w.tags::VARCHAR = to_json(s.tags)::VARCHAR) AS same
       FROM main.orders w JOIN read_parquet('${source}') s USING (id)`,
    )
    expect(same).toEqual({ rows: 5000n, same: 5000n })
    const again = await syncOnce(['--output', 'text'])
    expect(again.stdout).toMatch(/rows=0 /)
    const [count] = await query(warehouse(), 'SELECT count(*) AS n FROM main.orders')
    expect(count?.n).toBe(5000n)
  })

  it('prints the seed events with --output json', async () => {
    const result = await syncOnce(['--output', 'json'], { SKIPPR_STATUS_INTERVAL_SECONDS: '0.05' })
    expect(result.code).toBe(0)
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const status = lines.filter((e) => e.event === 'sync_status')
    expect(status.length).toBeGreaterThan(0)
    expect(Object.keys(status[0])).toEqual([
      'event',
      'phase',
      'pipeline',
      'total_rows',
      'bytes',
      'rows_written',
      'uploads_in_flight',
      'elapsed_ms',
      'timestamp',
      'run_id',
    ])
    const events = lines.filter((e) => e.event !== 'sync_status')
    expect(events.map((e) => e.event)).toEqual(['sync_start', 'namespace_discovered', 'sync_complete'])
    const runId = events[0].run_id
    expect(runId).toMatch(/^[0-9a-f-]{36}$/)
    for (const e of events) {
      expect(e.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/)
      expect(e).toMatchObject({ pipeline: 'bikehire', run_id: runId })
    }
    expect(events[0]).toEqual({
      event: 'sync_start',
      phase: 'start',
      pipeline: 'bikehire',
      timestamp: events[0].timestamp,
      run_id: runId,
    })
    expect(events[1]).toMatchObject({
      event: 'namespace_discovered',
      phase: 'discover',
      namespace: 'rentals',
      field_count: 9,
    })
    expect(Object.keys(events[2])).toEqual([
      'event',
      'phase',
      'pipeline',
      'namespaces_synced',
      'total_rows',
      'elapsed_ms',
      'timestamp',
      'run_id',
    ])
    expect(events[2]).toMatchObject({
      event: 'sync_complete',
      phase: 'complete',
      namespaces_synced: 1,
      total_rows: ROWS,
    })
  })

  it('runs the example config from the README', async () => {
    await copyFile(new URL('../examples/skippr.yml', import.meta.url), path.join(p.dir, 'skippr.yml'))
    const result = await syncOnce(['--output', 'text'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/Sync complete: pipeline=bikehire namespaces=1 rows=48213 elapsed=\d+ms\n$/)
    expect(await rentalCounts(warehouse())).toEqual({ rows: 48_213, unique: 48_213 })
  })
})

describe('scheduling', () => {
  it('syncs every pipeline without --pipeline, then skips those within sync_frequency_seconds', async () => {
    await p.write(
      'skippr.yml',
      `${bikehireConfig({ rows: 1000 })}  second:\n    data_source: data_sources.sample\n    data_sink: data_sinks.other\n    sync_frequency_seconds: 0\n`.replace(
        'data_sinks:\n',
        'data_sinks:\n  other:\n    Duckdb: { path: ./other.duckdb }\n',
      ),
    )
    const first = await runCli(['sync', '--once', '--output', 'text'], { cwd: p.dir })
    expect(first.code).toBe(0)
    expect(first.stdout.match(/^Sync complete: .*$/gm)).toEqual([
      expect.stringMatching(/^Sync complete: pipeline=bikehire namespaces=1 rows=1000 elapsed=\d+ms$/),
      expect.stringMatching(/^Sync complete: pipeline=second namespaces=1 rows=1000 elapsed=\d+ms$/),
    ])
    const second = await runCli(['sync', '--once', '--output', 'text'], { cwd: p.dir })
    expect(second.code).toBe(0)
    expect(second.stdout).toMatch(
      /^Pipeline 'bikehire' last ran \d+ seconds ago, skipping\.\nSync started: pipeline=second\n/,
    )
    expect(await p.logs()).toMatch(/Pipeline 'bikehire' last ran \d+ seconds ago, skipping\./)
    expect(await rentalCounts(warehouse())).toEqual({ rows: 1000, unique: 1000 })
  })

  it('skips a disabled pipeline', async () => {
    const store = await openStateStore({ dataDir: path.join(p.dir, 'data') })
    await store.pipeline('bikehire').setEnabled(false)
    await store.close()
    const result = await syncOnce(['--output', 'text'])
    expect(result).toMatchObject({ code: 0, stdout: "Pipeline 'bikehire' disabled, skipping.\n", stderr: '' })
    expect(await p.logs()).toContain("Pipeline 'bikehire' disabled, skipping.")
  })

  it('keeps the data in the WAL when the pipeline has no data_sink', async () => {
    await p.write(
      'skippr.yml',
      bikehireConfig({ rows: 500 }).replace('    data_sink: data_sinks.warehouse\n', ''),
    )
    const result = await syncOnce(['--output', 'text'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/Sync complete: pipeline=bikehire namespaces=1 rows=500 /)
  })
})

describe('bad input that needs the connector', () => {
  it("rejects an unknown key in a connector's fields", async () => {
    await p.write(
      'skippr.yml',
      bikehireConfig({ rows: 10, sink: 'Duckdb: { path: ./w.duckdb, table_prefix: x }' }),
    )
    const result = await syncOnce()
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      '[skippr] config failed: skippr.yml: data_sinks.warehouse.Duckdb: unknown key table_prefix: remove it or check its spelling\n',
    )
  })

  it.runIf(process.platform === 'linux')(
    'a path under /proc (where recursive mkdir never returns): gives up within the retry budget, naming it',
    async () => {
      await p.write(
        'skippr.yml',
        bikehireConfig({ rows: 10, sink: 'Duckdb: { path: /proc/skippr/warehouse.duckdb }' }),
      )
      const result = await syncOnce(['--output', 'text'], { SKIPPR_RETRY_BUDGET_SECONDS: '2' })
      expect(result.signal).toBeNull()
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(
        /cannot open DuckDB file \/proc\/skippr\/warehouse\.duckdb: ENOENT.*retry later\n$/,
      )
    },
  )

  it('names the sink types it knows for a type it does not (an installed skipprd names the package to install: tools/packaging)', async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: 10, sink: 'Teradata: { account: x }' }))
    const result = await syncOnce()
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      '[skippr] config failed: skippr.yml: data_sinks.warehouse: Teradata is not a sink type skipprd knows: the sink types are Amqp, AzureBlob, Bigquery, Clickhouse, Duckdb, File, Postgres, S3, Sftp, Snowflake, Stdout\n',
    )
  })
})
