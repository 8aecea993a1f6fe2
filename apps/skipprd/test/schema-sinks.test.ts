/**
 * `schema_sinks:` as a user runs them, with the built CLI: a DuckDB data sink whose `schema_sink:`
 * is a PostgreSQL entry (a database of this run's own; override the server with
 * SKIPPR_TEST_PG_URL). The schema sink's tables follow the saved schema at each sync: as
 * discovered, as the source evolves, as a user changes it; a schema sink that cannot be reached
 * stops the run in one line, before any row lands.
 */
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { query as duckdb } from './support/duckdb.js'
import { type Project, project } from './support/project.js'

const SERVER_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const DATABASE = `skippr_schema_sinks_${randomBytes(5).toString('hex')}`
const DB_URL = SERVER_URL.replace(/\/[^/]*$/, `/${DATABASE}`)
/** Nothing listens on port 1. */
const DOWN_URL = DB_URL.replace(/@[^/]+\//, '@127.0.0.1:1/')
const made: Project[] = []
/** One client, not a pool: its `end()` waits for the connection to close, before the database is dropped. */
let db: pg.Client

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: SERVER_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${DATABASE}`)
  await admin.end()
  db = new pg.Client({ connectionString: DB_URL })
  await db.connect()
})
afterAll(async () => {
  for (const p of made) await p.remove()
  await db?.end()
  const admin = new pg.Client({ connectionString: SERVER_URL })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
  await admin.end()
})

/** skippr.yml: `source` (a data_sources entry body) into DuckDB, whose schema sink is PostgreSQL `schema`. */
const config = (source: string, schema: string, schemaSink = 'schema_sinks.catalog') => `data_sources:
  src: { ${source} }
data_sinks:
  warehouse:
    Duckdb: { path: ./warehouse.duckdb }
    schema_sink: ${schemaSink}
schema_sinks:
  catalog:
    Postgres: { connection_string: \${CATALOG_URL}, schema: ${schema} }
pipelines:
  shop: { data_source: data_sources.src, data_sink: data_sinks.warehouse }
`

async function open(source: string, schemaSink?: string) {
  const schema = `cat_${randomBytes(4).toString('hex')}`
  const p = await project(config(source, schema, schemaSink))
  made.push(p)
  const cli = (args: string[], url = DB_URL) =>
    runCli(args, { cwd: p.dir, env: { CATALOG_URL: url, SKIPPR_RETRY_BUDGET_SECONDS: '1' } })
  return {
    p,
    schema,
    cli,
    sync: (url?: string) => cli(['sync', '-p', 'shop', '--once', '--output', 'text'], url),
    /** The schema sink's table of `table`: its columns and PostgreSQL types, in order; [] when missing. */
    columns: async (table: string) =>
      (
        await db.query<{ column_name: string; data_type: string }>(
          `SELECT column_name, data_type FROM information_schema.columns
           WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
          [schema, table],
        )
      ).rows.map((row) => `${row.column_name} ${row.data_type}`),
    /** The saved schema's fields, as `metadata show` prints them. */
    saved: async (namespace: string) => {
      const shown = await cli(['metadata', 'show', '-p', 'shop', '--namespace', namespace])
      expect(shown.stderr).toBe('')
      return (JSON.parse(shown.stdout) as { fields: { name: string }[] }).fields
    },
    warehouse: (sql: string) => duckdb(path.join(p.dir, 'warehouse.duckdb'), sql),
    rowsIn: async (table: string) =>
      (await duckdb(path.join(p.dir, 'warehouse.duckdb'), `SELECT count(*)::INT AS n FROM main.${table}`))[0]
        ?.n,
  }
}

/** The data sink's tables; none while its file does not exist. */
async function tablesIn(p: Project): Promise<unknown[]> {
  const file = path.join(p.dir, 'warehouse.duckdb')
  if (!existsSync(file)) return []
  return duckdb(file, "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'")
}

const SAMPLE = 'Sample: { dataset: bikehire, rows: 100, batch_rows: 50 }'
const BIKEHIRE_COLUMNS = [
  'rental_id bigint',
  'bike_id integer',
  'start_station integer',
  'end_station integer',
  'start_time timestamp with time zone',
  'end_time timestamp with time zone',
  'duration_s integer',
  'member_type text',
  'distance_km double precision',
]

describe.concurrent('schema sinks', { timeout: 120_000 }, () => {
  it("after discover and sync, the schema sink has the saved schema's table; a user's metadata apply reaches it at the next sync", async () => {
    const { schema, cli, sync, columns, saved, rowsIn } = await open(SAMPLE)
    expect(await cli(['discover', '-p', 'shop'])).toMatchObject({ code: 0, stderr: '' })
    expect(await columns('rentals')).toEqual([])

    const first = await sync()
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(await columns('rentals')).toEqual(BIKEHIRE_COLUMNS)
    const fields = await saved('rentals')
    expect((await columns('rentals')).map((c) => c.split(' ')[0])).toEqual(fields.map((f) => f.name))
    // The schema sink gets tables, not rows: the rows land in the data sink.
    expect(await rowsIn('rentals')).toBe(100)
    expect((await db.query(`SELECT count(*)::int AS n FROM ${schema}.rentals`)).rows).toEqual([{ n: 0 }])

    const note = { name: 'note', field_type: 'string', nullable: true }
    const applied = await cli([
      'metadata',
      'apply',
      '-p',
      'shop',
      '--namespace',
      'rentals',
      '--schema-json',
      JSON.stringify({ fields: [...fields, note] }),
    ])
    expect(applied).toMatchObject({ code: 0, stderr: '' })
    expect(await columns('rentals')).toEqual(BIKEHIRE_COLUMNS)
    // Nothing new to read: the next sync publishes the changed schema all the same.
    const next = await sync()
    expect(next).toMatchObject({ code: 0, stderr: '' })
    expect(next.stdout).toContain('rows=0')
    expect(await columns('rentals')).toEqual([...BIKEHIRE_COLUMNS, 'note text'])
  })

  it('a field a new source file brings is added to the schema sink during the next sync', async () => {
    // Small chunks: the new file's first chunk (what the File source samples of it) has no colour yet,
    // so the field arrives while the sync reads, as a new version of the saved schema.
    const { p, sync, columns, saved, rowsIn, warehouse } = await open(
      'File: { path: "orders/*.jsonl", format: jsonl, namespace: orders, chunk_bytes: 4096 }',
    )
    await mkdir(path.join(p.dir, 'orders'))
    await p.write('orders/1.jsonl', '{"id":1,"item":"pen"}\n{"id":2,"item":"ink"}\n')
    expect(await sync()).toMatchObject({ code: 0, stderr: '' })
    expect(await columns('orders')).toEqual(['id integer', 'item text'])

    const plain = Array.from({ length: 400 }, (_, i) => `{"id":${i + 3},"item":"pad"}\n`)
    const coloured = Array.from({ length: 10 }, (_, i) => `{"id":${i + 403},"item":"pad","colour":"red"}\n`)
    await p.write('orders/2.jsonl', [...plain, ...coloured].join(''))
    const evolved = await sync()
    expect(evolved).toMatchObject({ code: 0, stderr: '' })
    expect(evolved.stdout).toContain('rows=410')
    expect(await columns('orders')).toEqual(['id integer', 'item text', 'colour text'])
    expect((await saved('orders')).map((f) => f.name)).toEqual(['id', 'item', 'colour'])
    expect(await rowsIn('orders')).toBe(412)
    expect(await warehouse('SELECT count(colour)::INT AS n FROM main.orders')).toEqual([{ n: 10 }])
  })

  it('a schema sink that cannot be reached: one line naming it, exit 1, and no row lands before its tables', async () => {
    const { p, sync, cli, rowsIn } = await open(SAMPLE)
    const down = await sync(DOWN_URL)
    expect(down.code).toBe(1)
    expect(down.stderr).toMatch(
      /^\[skippr\] sync failed: pipeline 'shop': \d+ committed batch\(es\) could not land within 1 s \(schema_sinks\.catalog \(Postgres\) could not create or evolve the table of 'rentals': .+\); they stay in the WAL: retry later\n$/,
    )
    expect(await tablesIn(p)).toEqual([])

    const doctor = await cli(['doctor', '--output', 'json'], DOWN_URL)
    expect(doctor.code).toBe(1)
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; ok: boolean }[] }).checks
    expect(checks.find((c) => c.name === 'schema_sink:catalog')).toMatchObject({ ok: false })
    expect(checks.find((c) => c.name === 'sink:warehouse')).toMatchObject({ ok: true })

    // Once it answers, the batches the WAL kept land, after the tables.
    expect(await sync()).toMatchObject({ code: 0, stderr: '' })
    expect(await rowsIn('rentals')).toBe(100)
  })

  it('a DuckDB schema sink beside a PostgreSQL data sink gets the tables, and no rows', async () => {
    const schema = `wh_${randomBytes(4).toString('hex')}`
    const p = await project(`data_sources:
  src: { ${SAMPLE} }
data_sinks:
  warehouse:
    schema_sink: schema_sinks.catalog
    Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} }
schema_sinks:
  catalog: { Duckdb: { path: ./catalog.duckdb, schema: tables } }
pipelines:
  shop: { data_source: data_sources.src, data_sink: data_sinks.warehouse }
`)
    made.push(p)
    const run = await runCli(['sync', '-p', 'shop', '--once', '--output', 'text'], {
      cwd: p.dir,
      env: { WAREHOUSE_URL: DB_URL },
    })
    expect(run).toMatchObject({ code: 0, stderr: '' })
    const catalog = path.join(p.dir, 'catalog.duckdb')
    expect(
      (
        await duckdb(
          catalog,
          "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'tables' AND table_name = 'rentals'",
        )
      ).map((row) => row.column_name),
    ).toEqual(BIKEHIRE_COLUMNS.map((column) => column.split(' ')[0]))
    expect(await duckdb(catalog, 'SELECT count(*)::INT AS n FROM tables.rentals')).toEqual([{ n: 0 }])
    expect((await db.query(`SELECT count(*)::int AS n FROM ${schema}.rentals`)).rows).toEqual([{ n: 100 }])
  })

  it('a schema_sink that names no schema_sinks entry is refused in one line', async () => {
    const { sync } = await open(SAMPLE, 'schema_sinks.catalgo')
    expect(await sync()).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        '[skippr] config failed: skippr.yml: data_sinks.warehouse.schema_sink: schema_sinks.catalgo is not defined: did you mean schema_sinks.catalog?\n',
    })
  })
})
