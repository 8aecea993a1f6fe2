/**
 * Schema management as a user runs it, with the built CLI: `metadata show|apply`, `SCHEMA DUMP`,
 * `LOAD SCHEMA` and `ALTER TABLE` in `skipprd query`, each followed by the `sync` that lands by the
 * changed schema, into the real PostgreSQL (a database of this run's own; override the server with
 * SKIPPR_TEST_PG_URL) and a DuckDB file; and each refusal.
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { openStateStore } from '@skippr/state'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exited, runCli, spawnCli } from './support/cli.js'
import { query as duckdb } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const SERVER_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const DATABASE = `skippr_schema_${randomBytes(5).toString('hex')}`
const DB_URL = SERVER_URL.replace(/\/[^/]*$/, `/${DATABASE}`)
const made: Project[] = []

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: SERVER_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${DATABASE}`)
  await admin.end()
})
afterAll(async () => {
  for (const p of made) await p.remove()
  const admin = new pg.Client({ connectionString: SERVER_URL })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
  await admin.end()
})

/** A project syncing `rows` Sample rows into `sink` (the rows grow with `grow` between syncs). */
async function open(sink: string, rows: number) {
  const p = await project(bikehireConfig({ rows, batchRows: 50, sink }))
  made.push(p)
  const env = { WAREHOUSE_URL: DB_URL }
  const cli = (args: string[]) => runCli(args, { cwd: p.dir, env })
  return {
    p,
    cli,
    grow: (to: number) => p.write('skippr.yml', bikehireConfig({ rows: to, batchRows: 50, sink })),
    sync: () => cli(['sync', '-p', 'bikehire', '--once', '--output', 'text']),
    sql: (statements: string) => cli(['query', '-s', statements]),
    show: async (namespace?: string) => {
      const shown = await cli([
        'metadata',
        'show',
        '-p',
        'bikehire',
        ...(namespace ? ['--namespace', namespace] : []),
      ])
      expect(shown.stderr).toBe('')
      return JSON.parse(shown.stdout) as unknown
    },
  }
}

const BIKEHIRE_FIELDS = [
  { name: 'rental_id', field_type: 'long', nullable: false },
  { name: 'bike_id', field_type: 'int', nullable: false },
  { name: 'start_station', field_type: 'int', nullable: false },
  { name: 'end_station', field_type: 'int', nullable: false },
  { name: 'start_time', field_type: 'timestamp', nullable: false },
  { name: 'end_time', field_type: 'timestamp', nullable: false },
  { name: 'duration_s', field_type: 'int', nullable: false },
  { name: 'member_type', field_type: 'string', nullable: false },
  { name: 'distance_km', field_type: 'double', nullable: false },
]

/** The CLI with `input` on its stdin. */
async function withStdin(p: Project, args: string[], input: string) {
  const child = spawnCli(args, { cwd: p.dir })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d
  })
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d
  })
  child.stdin?.end(input)
  const { code } = await exited(child)
  return { code, stdout, stderr }
}

type Row = Record<string, unknown>
const saved = (version: number, fields: number) =>
  `Schema of bikehire.rentals saved as version ${version} (${fields} fields): the next sync reads the source by it.`

describe.concurrent('schema management', { timeout: 120_000 }, () => {
  it('metadata show prints the saved schema in the vendor shape after discover and after sync', async () => {
    const { cli, show, sync } = await open('Duckdb: { path: ./warehouse.duckdb }', 100)
    expect((await cli(['discover', '-p', 'bikehire', '--output', 'text'])).code).toBe(0)
    expect(await show()).toEqual({ namespaces: { rentals: { fields: BIKEHIRE_FIELDS } } })
    expect((await sync()).code).toBe(0)
    expect(await show('rentals')).toEqual({ fields: BIKEHIRE_FIELDS })
    const missing = await cli(['metadata', 'show', '-p', 'bikehire', '--namespace', 'trips'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe(
      "[skippr] metadata show failed: Namespace 'trips' not found in pipeline 'bikehire': its namespaces: rentals\n",
    )
  })

  it('ALTER TABLE DROP / RENAME / ALTER TYPE / MERGE COLUMN: the next sync lands by them in PostgreSQL', async () => {
    const schema = `s_${randomBytes(4).toString('hex')}`
    const { sql, sync, grow, show } = await open(
      `Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} }`,
      100,
    )
    expect((await sync()).stdout).toContain('rows=100')
    const altered = await sql(
      [
        'ALTER TABLE bikehire.rentals DROP COLUMN distance_km',
        'ALTER TABLE bikehire.rentals RENAME COLUMN bike_id TO bike',
        'alter table bikehire.rentals alter column duration_s type long',
        'ALTER TABLE bikehire.rentals MERGE COLUMN end_station INTO start_station',
      ].join('; '),
    )
    expect(altered.stderr).toBe('')
    expect(altered.stdout.trim().split('\n')).toEqual([
      saved(2, 8),
      "data_sinks.warehouse (Postgres) keeps what it landed so far with 'distance_km' (landed data is never deleted); rows from the next sync have no value for it: drop it there yourself if you want it gone.",
      saved(3, 8),
      "data_sinks.warehouse (Postgres) renames column 'bike_id' to 'bike' on the next sync.",
      saved(4, 8),
      saved(5, 7),
      "data_sinks.warehouse (Postgres) keeps what it landed so far with 'end_station' (landed data is never deleted); rows from the next sync carry its values in 'start_station'.",
    ])
    const { fields } = (await show('rentals')) as { fields: { name: string; field_type: string }[] }
    expect(fields.map((f) => `${f.name} ${f.field_type}`)).toEqual([
      'rental_id long',
      'bike int',
      'start_station int',
      'start_time timestamp',
      'end_time timestamp',
      'duration_s long',
      'member_type string',
    ])
    await grow(200)
    expect((await sync()).stdout).toContain('rows=100')

    const client = new pg.Client({ connectionString: DB_URL })
    await client.connect()
    try {
      const columns = await client.query(
        'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
        [schema, 'rentals'],
      )
      // Renamed, added and widened by the sink; the dropped and merged-away columns keep the rows landed before.
      expect(columns.rows.map((r: Row) => `${r.column_name} ${r.data_type}`)).toEqual([
        'rental_id bigint',
        'bike integer',
        'start_station integer',
        'end_station integer',
        'start_time timestamp with time zone',
        'end_time timestamp with time zone',
        'duration_s bigint',
        'member_type text',
        'distance_km double precision',
      ])
      const halves = await client.query(
        `SELECT rental_id > 100 AS later, count(*)::int AS rows, count(DISTINCT rental_id)::int AS ids,
                count(bike)::int AS bike, count(end_station)::int AS end_station,
                count(distance_km)::int AS distance_km, count(start_station)::int AS start_station
         FROM "${schema}".rentals GROUP BY 1 ORDER BY 1`,
      )
      expect(halves.rows).toEqual([
        {
          later: false,
          rows: 100,
          ids: 100,
          bike: 100,
          end_station: 100,
          distance_km: 100,
          start_station: 100,
        },
        {
          later: true,
          rows: 100,
          ids: 100,
          bike: 100,
          end_station: 0,
          distance_km: 0,
          start_station: 100,
        },
      ])
    } finally {
      await client.end()
    }
  })

  it('metadata apply from a file and from stdin; SCHEMA DUMP then LOAD SCHEMA brings the dumped schema back (DuckDB)', async () => {
    const { p, cli, sql, sync, grow, show } = await open('Duckdb: { path: ./warehouse.duckdb }', 100)
    expect((await sync()).code).toBe(0)
    const dumped = await sql(
      "SCHEMA DUMP bikehire.rentals TO 'rentals.json'; SCHEMA DUMP bikehire TO 'all.json'",
    )
    expect(dumped.stdout).toBe(
      "Schema of bikehire.rentals (9 fields) written to 'rentals.json'.\nSchemas of bikehire (1 namespace) written to 'all.json'.\n",
    )
    expect(JSON.parse(await readFile(path.join(p.dir, 'rentals.json'), 'utf8'))).toEqual({
      fields: BIKEHIRE_FIELDS,
    })

    // Without member_type, with a new field the source does not have.
    const fields = [
      ...BIKEHIRE_FIELDS.filter((f) => f.name !== 'member_type'),
      { name: 'note', field_type: 'string' },
    ]
    await p.write('changed.json', JSON.stringify({ fields }))
    const applied = await cli([
      'metadata',
      'apply',
      '-p',
      'bikehire',
      '--namespace',
      'rentals',
      '--schema',
      'changed.json',
    ])
    expect(applied).toMatchObject({ code: 0, stdout: `${saved(2, 9)}\n`, stderr: '' })
    const again = await withStdin(
      p,
      ['metadata', 'apply', '-p', 'bikehire', '--namespace', 'rentals', '--schema', '-'],
      JSON.stringify({ fields }),
    )
    expect(again).toMatchObject({ code: 0, stdout: 'Schema of bikehire.rentals unchanged (version 2).\n' })
    await grow(200)
    expect((await sync()).stdout).toContain('rows=100')

    const loaded = await sql("LOAD SCHEMA 'all.json' INTO bikehire")
    expect(loaded).toMatchObject({ code: 0, stdout: `${saved(3, 9)}\n`, stderr: '' })
    expect(await show('rentals')).toEqual({ fields: BIKEHIRE_FIELDS })
    await grow(300)
    expect((await sync()).stdout).toContain('rows=100')

    const thirds = await duckdb(
      path.join(p.dir, 'warehouse.duckdb'),
      `SELECT ((rental_id - 1) // 100)::INT AS third, count(*)::INT AS rows, count(member_type)::INT AS member_type,
              count(note)::INT AS note, count(distance_km)::INT AS distance_km
       FROM main.rentals GROUP BY 1 ORDER BY 1`,
    )
    expect(thirds).toEqual([
      { third: 0, rows: 100, member_type: 100, note: 0, distance_km: 100 },
      { third: 1, rows: 100, member_type: 0, note: 0, distance_km: 100 },
      { third: 2, rows: 100, member_type: 100, note: 0, distance_km: 100 },
    ])
  })

  it('refuses, with one line and exit 1, a narrower type, a primary-key field dropped, an invalid file and a running sync', async () => {
    const { p, cli, sql, sync, show } = await open('Duckdb: { path: ./warehouse.duckdb }', 100)
    expect((await sync()).code).toBe(0)
    const apply = (json: string) =>
      cli(['metadata', 'apply', '-p', 'bikehire', '--namespace', 'rentals', '--schema-json', json])

    const narrowed = await apply(
      JSON.stringify({
        fields: BIKEHIRE_FIELDS.map((f) => (f.name === 'rental_id' ? { ...f, field_type: 'int' } : f)),
      }),
    )
    expect(narrowed).toMatchObject({
      code: 1,
      stderr:
        "[skippr] metadata apply failed: schema change of namespace 'rentals' refused: 'rental_id' cannot change from long to int: types only widen (int, long, double; date, timestamp; any type to string), so the rows already read still fit; nothing was changed\n",
    })
    const withoutKey = await sql('ALTER TABLE bikehire.rentals DROP COLUMN rental_id')
    expect(withoutKey).toMatchObject({
      code: 1,
      stderr:
        "[skippr] query failed: schema change of namespace 'rentals' refused: 'rental_id' is part of its primary key (rental_id), which every row needs; nothing was changed\n",
    })
    await p.write('bad.json', '{"fields":[{"name":"rental_id","field_type":"bigint"}]}')
    const bad = await cli([
      'metadata',
      'apply',
      '-p',
      'bikehire',
      '--namespace',
      'rentals',
      '--schema',
      'bad.json',
    ])
    expect(bad).toMatchObject({
      code: 1,
      stderr:
        '[skippr] metadata apply failed: bad.json: fields[0].field_type "bigint" is not a field type: use one of string, int, long, double, boolean, date, timestamp, json\n',
    })
    const missing = await sql("LOAD SCHEMA 'nope.json' INTO bikehire.rentals")
    expect(missing.stderr).toMatch(
      /^\[skippr\] query failed: nope\.json: cannot be read \(ENOENT\): check the path/,
    )

    const store = await openStateStore({ dataDir: path.join(p.dir, 'data') })
    const lease = await store
      .pipeline('bikehire')
      .acquireLease({ owner: 'test-writer:42', heartbeatIntervalMs: 0 })
    try {
      const busy = await sql('ALTER TABLE bikehire.rentals DROP COLUMN distance_km')
      expect(busy.code).toBe(1)
      expect(busy.stderr).toMatch(
        /^\[skippr\] query failed: ALTER TABLE bikehire\.rentals DROP COLUMN distance_km refused: a sync is writing pipeline 'bikehire'/,
      )
    } finally {
      await lease.release()
      await store.close()
    }
    expect(await show('rentals')).toEqual({ fields: BIKEHIRE_FIELDS })
  })

  it('refuses RENAME and MERGE COLUMN while rows of the namespace are pending in the WAL', async () => {
    const p = await project(
      [
        'data_sources:',
        '  sample:',
        '    Sample: { dataset: bikehire, rows: 100 }',
        'pipelines:',
        '  bikehire:',
        '    data_source: data_sources.sample',
        '',
      ].join('\n'),
    )
    made.push(p)
    expect(
      (await runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir })).code,
    ).toBe(0)
    const renamed = await runCli(
      ['query', '-s', 'ALTER TABLE bikehire.rentals RENAME COLUMN bike_id TO bike'],
      { cwd: p.dir },
    )
    expect(renamed.code).toBe(1)
    expect(renamed.stderr).toBe(
      "[skippr] query failed: schema change of namespace 'rentals' refused: 100 rows of it read under the current names are pending in the WAL and would land under the old name; this pipeline has no data_sink, so they stay there: RESET PIPELINE and sync again to read them under the new names, or add the new column with metadata apply instead; nothing was changed\n",
    )
    // A drop does not move values: accepted, and the WAL's rows keep the column they were read with.
    const dropped = await runCli(['query', '-s', 'ALTER TABLE bikehire.rentals DROP COLUMN distance_km'], {
      cwd: p.dir,
    })
    expect(dropped).toMatchObject({ code: 0, stdout: `${saved(2, 8)}\n` })
  })
  it("a source's own new column still arrives after a user's change, and a dropped one stays dropped (Postgres source)", async () => {
    const table = `orders_${randomBytes(4).toString('hex')}`
    const source = new pg.Client({ connectionString: DB_URL })
    await source.connect()
    try {
      await source.query(`CREATE TABLE ${table} (id bigint PRIMARY KEY, a text, b int)`)
      await source.query(`INSERT INTO ${table} SELECT i, 'a' || i, i FROM generate_series(1, 50) i`)
      const p = await project(
        [
          'data_sources:',
          `  shop: { Postgres: { connection_string: \${WAREHOUSE_URL}, tables: [${table}] } }`,
          'data_sinks:',
          '  warehouse: { Duckdb: { path: ./warehouse.duckdb } }',
          'pipelines:',
          '  shop: { data_source: data_sources.shop, data_sink: data_sinks.warehouse }',
          '',
        ].join('\n'),
      )
      made.push(p)
      const cli = (args: string[]) => runCli(args, { cwd: p.dir, env: { WAREHOUSE_URL: DB_URL } })
      const sync = () => cli(['sync', '-p', 'shop', '--once', '--output', 'text'])
      expect((await sync()).stdout).toContain('rows=50')
      const altered = await cli([
        'query',
        '-s',
        `ALTER TABLE shop.${table} DROP COLUMN b; ALTER TABLE shop.${table} RENAME COLUMN a TO alpha`,
      ])
      expect(altered).toMatchObject({ code: 0, stderr: '' })
      expect(altered.stdout).toContain(
        "data_sinks.warehouse (Duckdb) renames column 'a' to 'alpha' on the next sync.",
      )
      await source.query(`ALTER TABLE ${table} ADD COLUMN c boolean`)
      await source.query(
        `INSERT INTO ${table} SELECT i, 'a' || i, i, i % 2 = 0 FROM generate_series(51, 80) i`,
      )
      expect((await sync()).stdout).toContain('rows=30')

      const shown = await cli(['metadata', 'show', '-p', 'shop', '--namespace', table])
      expect(JSON.parse(shown.stdout)).toEqual({
        fields: [
          { name: 'id', field_type: 'long', nullable: false },
          { name: 'alpha', field_type: 'string', nullable: true },
          { name: 'c', field_type: 'boolean', nullable: true },
        ],
      })
      const landed = await duckdb(
        path.join(p.dir, 'warehouse.duckdb'),
        `SELECT id > 50 AS later, count(*)::INT AS rows, count(b)::INT AS b,
                count(alpha)::INT AS alpha, count(c)::INT AS c, bool_and(alpha = 'a' || id) AS exact
         FROM main.${table} GROUP BY 1 ORDER BY 1`,
      )
      // The rename reached the table: the rows landed before are under the new name too.
      expect(landed).toEqual([
        { later: false, rows: 50, b: 50, alpha: 50, c: 0, exact: true },
        { later: true, rows: 30, b: 0, alpha: 30, c: 30, exact: true },
      ])
    } finally {
      await source.query(`DROP TABLE IF EXISTS ${table}`)
      await source.end()
    }
  })
})
