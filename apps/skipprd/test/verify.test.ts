/**
 * `skipprd verify` through the built CLI, after real syncs into DuckDB files and the real
 * PostgreSQL (a schema per test): counts that add up, rows duplicated by hand, batches left pending
 * by a destination that was down, a source that grew, rows set aside as deadletters.
 */
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { PG_URL, pgSchemaPerTest } from './support/file-sync.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const ROWS = 1200
/** Nothing listens on port 1. */
const DOWN_URL = PG_URL.replace(/@[^/]+\//, '@127.0.0.1:1/')
const { admin, name: schemaName } = pgSchemaPerTest('skippr_verify')

let p: Project
beforeEach(async () => {
  p = await project()
})
afterEach(async () => {
  await p.remove()
})

interface Tally {
  readonly pipeline: string
  readonly ok: boolean
  readonly pending_batches: number
  readonly namespaces: {
    readonly namespace: string
    readonly source_rows: number | null
    readonly destination_rows: number | null
    readonly duplicates: number | null
    readonly pending_rows: number
    readonly deadletter_rows: number
    readonly verdict: string
    readonly reason: string
  }[]
  readonly notes: string[]
}

const sync = (pipeline: string, env: Record<string, string> = {}) =>
  runCli(['sync', '-p', pipeline, '--once', '--output', 'text'], { cwd: p.dir, env })

async function verifyJson(pipeline: string, env: Record<string, string> = {}) {
  const run = await runCli(['verify', '-p', pipeline, '--output', 'json'], { cwd: p.dir, env })
  expect(run.stderr).toBe('')
  return { code: run.code, tally: JSON.parse(run.stdout) as Tally }
}

const verifyText = (pipeline: string, env: Record<string, string> = {}) =>
  runCli(['verify', '-p', pipeline], { cwd: p.dir, env })

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)

/** Runs `sql` on a DuckDB file the CLI wrote, as a user's own session would. */
async function duckdb(file: string, sql: string): Promise<void> {
  const instance = await DuckDBInstance.create(file)
  try {
    const connection = await instance.connect()
    await connection.run(sql)
    connection.closeSync()
  } finally {
    instance.closeSync()
  }
}

describe('skipprd verify', () => {
  it('after a clean sync: every count adds up, exit 0', async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: ROWS, batchRows: 500 }))
    expect((await sync('bikehire')).code).toBe(0)
    const { code, tally } = await verifyJson('bikehire')
    expect(code).toBe(0)
    expect(tally).toEqual({
      pipeline: 'bikehire',
      ok: true,
      pending_batches: 0,
      namespaces: [
        {
          namespace: 'rentals',
          source_rows: ROWS,
          destination_rows: ROWS,
          duplicates: 0,
          pending_rows: 0,
          deadletter_rows: 0,
          verdict: 'ok',
          reason: `source ${ROWS} = destination ${ROWS} + pending 0 + deadlettered 0`,
        },
      ],
      notes: [],
    })
    const text = await verifyText('bikehire')
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(
      `rentals: ok: source ${ROWS} = destination ${ROWS} + pending 0 + deadlettered 0\n`,
    )
    expect(lastLine(text.stdout)).toBe(
      "verify: pipeline 'bikehire': 1 namespace(s) match (0 batch(es) pending in the WAL)",
    )
  })

  it('rows duplicated by hand in the destination: a mismatch naming the namespace, exit 1', async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: ROWS, batchRows: 500 }))
    expect((await sync('bikehire')).code).toBe(0)
    await duckdb(
      path.join(p.dir, 'warehouse.duckdb'),
      'INSERT INTO main.rentals SELECT * FROM main.rentals WHERE rental_id <= 3',
    )
    const text = await verifyText('bikehire')
    expect(text.code).toBe(1)
    expect(text.stderr).toBe('')
    expect(lastLine(text.stdout)).toBe("verify: pipeline 'bikehire': MISMATCH in rentals")
    expect(text.stdout).toContain(
      `rentals: mismatch: source ${ROWS} ≠ destination ${ROWS + 3} + pending 0 + deadlettered 0 (3 more than the source holds); 3 duplicate row(s) in the destination (same rental_id)\n`,
    )
    const { code, tally } = await verifyJson('bikehire')
    expect(code).toBe(1)
    expect(tally.ok).toBe(false)
    expect(tally.namespaces[0]).toMatchObject({
      destination_rows: ROWS + 3,
      duplicates: 3,
      verdict: 'mismatch',
    })
  })

  it('with the destination down during the sync, the pending batches are counted; after the next sync, the destination', async () => {
    const sink = `Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schemaName()} }`
    await p.write('skippr.yml', bikehireConfig({ rows: ROWS, batchRows: 500, sink }))
    const down = await sync('bikehire', { WAREHOUSE_URL: DOWN_URL, SKIPPR_RETRY_BUDGET_SECONDS: '1' })
    expect(down.code).toBe(1)
    const pending = await verifyJson('bikehire', { WAREHOUSE_URL: PG_URL })
    expect(pending.code).toBe(0)
    expect(pending.tally.pending_batches).toBeGreaterThan(0)
    expect(pending.tally.namespaces).toEqual([
      expect.objectContaining({ source_rows: ROWS, destination_rows: 0, pending_rows: ROWS, verdict: 'ok' }),
    ])
    expect((await sync('bikehire', { WAREHOUSE_URL: PG_URL })).code).toBe(0)
    const landed = await verifyJson('bikehire', { WAREHOUSE_URL: PG_URL })
    expect(landed.code).toBe(0)
    expect(landed.tally.pending_batches).toBe(0)
    expect(landed.tally.namespaces[0]).toMatchObject({
      destination_rows: ROWS,
      pending_rows: 0,
      duplicates: 0,
    })
  })

  it('a source that grew since the sync: the rows not synced yet are a mismatch', async () => {
    const schema = schemaName()
    await admin.query(`CREATE SCHEMA "${schema}"`)
    await admin.query(`CREATE TABLE "${schema}".items (id int PRIMARY KEY, name text)`)
    await admin.query(`INSERT INTO "${schema}".items SELECT i, 'n' || i FROM generate_series(1, 30) AS i`)
    await p.write(
      'skippr.yml',
      [
        `data_sources: { db: { Postgres: { connection_string: \${SOURCE_URL}, tables: [{ name: items, schema: ${schema} }] } } }`,
        'data_sinks: { warehouse: { Duckdb: { path: ./warehouse.duckdb } } }',
        'pipelines: { items: { data_source: data_sources.db, data_sink: data_sinks.warehouse } }',
        '',
      ].join('\n'),
    )
    const env = { SOURCE_URL: PG_URL }
    expect((await sync('items', env)).code).toBe(0)
    expect((await verifyJson('items', env)).tally.namespaces[0]).toMatchObject({
      source_rows: 30,
      verdict: 'ok',
    })
    await admin.query(`INSERT INTO "${schema}".items SELECT i, 'n' || i FROM generate_series(31, 35) AS i`)
    const text = await verifyText('items', env)
    expect(text.code).toBe(1)
    expect(text.stdout).toContain(
      'items: mismatch: source 35 ≠ destination 30 + pending 0 + deadlettered 0 (5 fewer than the source holds)\n',
    )
  })

  it('rows the source set aside count as deadlettered', async () => {
    // Line 3 holds a NUL, line 5 a byte that is not UTF-8: the File source sets both aside.
    await p.write(
      'events.csv',
      Buffer.concat([
        Buffer.from('id,name\n1,a\n2,b\0c\n3,c\n4,'),
        Buffer.from([0xff]),
        Buffer.from('d\n5,e\n'),
      ]),
    )
    await p.write(
      'skippr.yml',
      [
        'data_sources: { events: { File: { path: events.csv, format: csv } } }',
        'data_sinks: { warehouse: { Duckdb: { path: ./warehouse.duckdb } } }',
        'pipelines: { events: { data_source: data_sources.events, data_sink: data_sinks.warehouse } }',
        '',
      ].join('\n'),
    )
    expect((await sync('events')).code).toBe(0)
    const { code, tally } = await verifyJson('events')
    expect(code).toBe(0)
    expect(tally.namespaces).toEqual([
      expect.objectContaining({
        namespace: 'events',
        source_rows: 5,
        destination_rows: 3,
        deadletter_rows: 2,
        verdict: 'ok',
      }),
    ])
    // The File source's schema has no primary key: nothing to find duplicates by.
    expect(tally.namespaces[0]?.duplicates).toBeNull()
  })

  it('a destination that cannot count: not verified, exit 0, saying why', async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: 50, sink: 'Stdout: {}' }))
    expect((await sync('bikehire')).code).toBe(0)
    const text = await verifyText('bikehire')
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('note: destination rows: not counted, not supported by Stdout\n')
    expect(lastLine(text.stdout)).toMatch(/^verify: pipeline 'bikehire': not verified: /)
  })

  it('needs a pipeline (exit 2) with a destination (exit 1)', async () => {
    await p.write(
      'skippr.yml',
      'data_sources: { s: { Sample: { dataset: bikehire, rows: 5 } } }\npipelines: { walonly: { data_source: data_sources.s } }\n',
    )
    const none = await runCli(['verify'], { cwd: p.dir })
    expect(none.code).toBe(2)
    expect(none.stderr).toBe('[skippr] verify needs a pipeline: pass -p <pipeline> (or set PIPELINE_NAME)\n')
    const walOnly = await verifyText('walonly')
    expect(walOnly.code).toBe(1)
    expect(walOnly.stderr).toMatch(/^\[skippr\] verify failed: pipeline 'walonly' has no data_sink: /)
  })
})
