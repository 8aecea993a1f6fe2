/** `skipprd sync` end to end into the real PostgreSQL on this machine (override with SKIPPR_TEST_PG_URL). */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { duckRows, writeParquet } from './support/duckdb.js'
import {
  EVOLVING_ENV,
  EVOLVING_EXPECTED,
  EVOLVING_ROWS,
  evolvingCounts,
  writeEvolvingItems,
  writeLateKeyItems,
} from './support/evolving.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
/** The same server, with a password in the URL: trust auth ignores it, the logs must not show it. */
const PASSWORD = `pw-${randomBytes(6).toString('hex')}`
const SECRET_URL = PG_URL.replace('://postgres@', `://postgres:${PASSWORD}@`)
/** Nothing listens on port 1. */
const DOWN_URL = PG_URL.replace(/@[^/]+\//, '@127.0.0.1:1/')
const ROWS = 10_000

const admin = new pg.Pool({ connectionString: PG_URL, max: 2 })
let schema: string
let p: Project

beforeAll(async () => {
  await admin.query('SELECT 1')
})
afterAll(async () => {
  await admin.end()
})
beforeEach(async () => {
  schema = `skippr_e2e_${randomBytes(5).toString('hex')}`
  p = await project(
    bikehireConfig({
      rows: ROWS,
      sink: `Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} }`,
    }),
  )
})
afterEach(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await p.remove()
})

const sync = (url: string, args: string[] = [], env: Record<string, string> = {}) =>
  runCli(['sync', '--pipeline', 'bikehire', '--once', '--output', 'text', ...args], {
    cwd: p.dir,
    env: { WAREHOUSE_URL: url, ...env },
  })

async function counts(): Promise<{ rows: number; unique: number }> {
  const { rows } = await admin.query(
    `SELECT count(*)::int AS rows, count(DISTINCT rental_id)::int AS uniq FROM "${schema}".rentals`,
  )
  return { rows: rows[0].rows, unique: rows[0].uniq }
}

describe('sync --once into PostgreSQL', () => {
  it('lands every row once into a fresh schema; a rerun lands nothing twice', async () => {
    const first = await sync(PG_URL)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(
      new RegExp(`Sync complete: pipeline=bikehire namespaces=1 rows=${ROWS} elapsed=\\d+ms\n$`),
    )
    expect(await counts()).toEqual({ rows: ROWS, unique: ROWS })
    const again = await sync(PG_URL)
    expect(again.stdout).toMatch(/rows=0 elapsed=/)
    expect(await counts()).toEqual({ rows: ROWS, unique: ROWS })
  })

  it('a column that appears mid-run is added while other batches load: every row once, the new values kept', async () => {
    await writeEvolvingItems(p, `Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} }`)
    const run = await sync(PG_URL, [], EVOLVING_ENV)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const { rows } = await admin.query(evolvingCounts(`"${schema}".items`))
    expect(rows[0]).toEqual(EVOLVING_EXPECTED)
  })

  it('a key first seen far past the sample becomes a column, its values kept', async () => {
    await writeLateKeyItems(p, `Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} }`)
    const run = await sync(PG_URL)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const { rows } = await admin.query(evolvingCounts(`"${schema}".items`))
    expect(rows[0]).toEqual({ rows: EVOLVING_ROWS, uniq: EVOLVING_ROWS, scored: 11, first_scored: 2990 })
  })

  it('lands a Parquet file with every value as the file holds it', async () => {
    const source = path.join(p.dir, 'orders.parquet')
    await writeParquet(
      source,
      `SELECT i::INTEGER AS id, 'order "' || i || '",' || chr(10) || 'note' AS name,
         ((i * 7919) / 100 - 900)::DECIMAL(12, 2) AS amount,
         TIMESTAMP '1969-12-31 23:59:59' + to_microseconds(i * 1000003) AS stamp,
         DATE '2024-01-01' + (i % 400)::INTEGER AS day, {'tags': ['a' || i, NULL], 'n': i} AS doc
       FROM range(3000) r(i)`,
    )
    await p.write(
      'skippr.yml',
      [
        'data_sources: { orders: { File: { path: orders.parquet, format: parquet } } }',
        `data_sinks: { warehouse: { Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} } } }`,
        'pipelines: { bikehire: { data_source: data_sources.orders, data_sink: data_sinks.warehouse } }',
        '',
      ].join('\n'),
    )
    const run = await sync(PG_URL)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    // Each side formats its values the same way: decimals and timestamps as text, json re-serialised.
    const expected = await duckRows(
      `SELECT id, name, amount::VARCHAR AS amount, strftime(stamp, '%Y-%m-%d %H:%M:%S.%f') AS stamp,
         strftime(day, '%Y-%m-%d') AS day, to_json(doc)::VARCHAR AS doc
       FROM read_parquet('${source}') ORDER BY id`,
    )
    const { rows } = await admin.query(
      `SELECT id, name, to_char(amount, 'FM999999990.00') AS amount,
         to_char(stamp AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS stamp, day::text AS day, doc::text AS doc
       FROM "${schema}".orders ORDER BY id`,
    )
    expect(rows.map((r) => ({ ...r, doc: JSON.parse(r.doc) }))).toEqual(
      expected.map((r) => ({ ...r, doc: JSON.parse(String(r.doc)) })),
    )
  })

  it('never writes a secret to a log, an event or an error', async () => {
    const down = await sync(SECRET_URL.replace(/@[^/]+\//, '@127.0.0.1:1/'), ['--log', 'debug'], {
      SKIPPR_RETRY_BUDGET_SECONDS: '1',
    })
    expect(down.code).toBe(1)
    const ok = await sync(SECRET_URL, ['--log', 'debug', '--output', 'json'])
    expect(ok.code).toBe(0)
    const everything = [ok.stdout, ok.stderr, down.stdout, down.stderr, await p.logs()].join('\n')
    expect(everything).toContain('"msg":"sync complete"')
    expect(everything).toContain('could not land')
    expect(everything).not.toContain(PASSWORD)
  })
})

describe('a destination that fails', () => {
  it('unreachable: exits 1 with the rows kept in the WAL, and a later run lands them once reachable', async () => {
    const down = await sync(DOWN_URL, [], { SKIPPR_RETRY_BUDGET_SECONDS: '1' })
    expect(down.code).toBe(1)
    expect(down.stdout).toBe(
      'Sync started: pipeline=bikehire\n[start] Ingesting\n[done]  Ingesting\n[start] Finalising\n',
    )
    expect(down.stderr).toMatch(
      /^\[skippr\] sync failed: pipeline 'bikehire': \d+ committed batch\(es\) could not land within 1 s \(.+\); they stay in the WAL: retry later\n$/,
    )
    const up = await sync(PG_URL)
    expect(up.code).toBe(0)
    // Everything was read by the first run: this one only lands what the WAL kept.
    expect(up.stdout).toMatch(new RegExp(`rows=${ROWS} elapsed=`))
    expect(await counts()).toEqual({ rows: ROWS, unique: ROWS })
  })

  it('rejecting a write (not for its rows): exits 1 with the batch kept in the WAL, landed once the destination accepts it', async () => {
    await admin.query(`CREATE SCHEMA "${schema}"`)
    await admin.query(
      `CREATE TABLE "${schema}".rentals (rental_id bigint, bike_id integer, start_station integer, end_station integer,
        start_time timestamptz, end_time timestamptz, duration_s integer, member_type text, distance_km double precision)`,
    )
    // An access rule refuses every insert: no row is at fault, so none is set aside.
    await admin.query(
      `CREATE FUNCTION "${schema}".closed() RETURNS trigger LANGUAGE plpgsql AS
         $$ BEGIN RAISE EXCEPTION 'inserts are closed' USING ERRCODE = '42501'; END $$`,
    )
    await admin.query(
      `CREATE TRIGGER closed BEFORE INSERT ON "${schema}".rentals FOR EACH ROW EXECUTE FUNCTION "${schema}".closed()`,
    )
    const rejected = await sync(PG_URL)
    expect(rejected.code).toBe(1)
    expect(rejected.stderr).toMatch(
      /^\[skippr\] sync failed: pipeline 'bikehire': the destination rejected batch bikehire\/[0-9a-f]+\/\d+: .*inserts are closed.*The batch stays in the WAL; fix the destination and run sync again, or set the batch aside .*DEADLETTER BATCH \d+ IN PIPELINE bikehire.*\n$/,
    )
    await admin.query(`DROP TRIGGER closed ON "${schema}".rentals`)
    const fixed = await sync(PG_URL)
    expect(fixed.code).toBe(0)
    expect(await counts()).toEqual({ rows: ROWS, unique: ROWS })
  })
})
