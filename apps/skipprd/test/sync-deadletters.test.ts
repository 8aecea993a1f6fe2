/**
 * Bad rows as a user meets them, through the built CLI into the real PostgreSQL and real DuckDB
 * files: each bad row ends in the pipeline's deadletter table (or the discard count), every good
 * row lands exactly once, the run exits 0 in seconds, and a rerun lands nothing. The retry budget
 * is ten minutes, so a run that retried a refusal would be killed by the test timeout instead.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { query as duckdb, duckRows } from './support/duckdb.js'
import { PG_URL, pgSchemaPerTest, postgresSink } from './support/file-sync.js'
import { type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  p = await project()
})
afterEach(async () => {
  await p.remove()
})
const pgSchema = pgSchemaPerTest('skippr_dl')

/** Line 3 holds a NUL, line 5 a byte that is not UTF-8: the File source sets both aside. */
const BAD_BYTES_CSV = Buffer.concat([
  Buffer.from('id,name\n1,a\n2,b\0c\n3,c\n4,'),
  Buffer.from([0xff]),
  Buffer.from('d\n5,e\n'),
])

interface Pipeline {
  readonly source: string
  readonly sink: string
  readonly deadletters?: string
  /** More keys of the pipeline, e.g. `buffer_threshold_bytes: 64`. */
  readonly extra?: string
}

async function sync(pipeline: Pipeline, output: 'text' | 'json' = 'text', expectedCode = 0) {
  const lines = [
    `data_sources: { events: { File: { ${pipeline.source} } } }`,
    `data_sinks: { warehouse: { ${pipeline.sink} } }`,
    ...(pipeline.deadletters ? [`deadletter_sinks: { rejects: { ${pipeline.deadletters} } }`] : []),
    'pipelines:',
    '  events:',
    '    data_source: data_sources.events',
    '    data_sink: data_sinks.warehouse',
    ...(pipeline.deadletters ? ['    deadletter_sink: deadletter_sinks.rejects'] : []),
    ...(pipeline.extra ? [`    ${pipeline.extra}`] : []),
    '',
  ]
  await p.write('skippr.yml', lines.join('\n'))
  const run = await runCli(['sync', '--pipeline', 'events', '--once', '--output', output], {
    cwd: p.dir,
    env: { WAREHOUSE_URL: PG_URL, SKIPPR_RETRY_BUDGET_SECONDS: '600' },
  })
  if (expectedCode === 0) expect(run.stderr).toBe('')
  expect(run.code).toBe(expectedCode)
  return run
}

const query = (sql: string) => runCli(['query', '--sql', sql], { cwd: p.dir, env: { WAREHOUSE_URL: PG_URL } })

const pgRows = async (sql: string) => (await pgSchema.admin.query(sql)).rows as Record<string, unknown>[]
/** The text of every file a File sink wrote below `dir` (one per batch part, under `<pipeline>/<epoch>/`). */
const filesText = async (dir: string) => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const files = entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name))
  return (await Promise.all(files.map((file) => readFile(file, 'utf8')))).join('')
}

describe('records the source cannot pass on', () => {
  it('PostgreSQL: land in _dl_<pipeline> with their line and reason; the rest once; a rerun lands nothing', async () => {
    await p.write('events.csv', BAD_BYTES_CSV)
    const schema = pgSchema.name()
    const pipeline = {
      source: 'path: events.csv, format: csv',
      sink: postgresSink(schema),
      deadletters: postgresSink(schema),
    }
    const run = await sync(pipeline)
    expect(run.stdout).toMatch(/rows=3 deadletters=2 /)
    expect(await pgRows(`SELECT id, name FROM "${schema}".events ORDER BY id`)).toEqual([
      { id: 1, name: 'a' },
      { id: 3, name: 'c' },
      { id: 5, name: 'e' },
    ])
    const deadletters = await pgRows(
      `SELECT id, namespace, record, error, failure_code, source_uri, offset_key, offset_pos, event_time, processed_time
         FROM "${schema}"._dl_events ORDER BY offset_pos`,
    )
    expect(deadletters).toMatchObject([
      {
        namespace: 'events',
        record: '2,b\uFFFDc',
        source_uri: 'events.csv',
        offset_key: 'line',
        offset_pos: '3',
      },
      {
        namespace: 'events',
        record: '4,\uFFFDd',
        source_uri: 'events.csv',
        offset_key: 'line',
        offset_pos: '5',
      },
    ])
    for (const d of deadletters) {
      expect(d.error).toMatch(/events\.csv.*line/)
      expect(d.failure_code).toMatch(/^SKIPPR_/)
      expect(d.event_time).toBeInstanceOf(Date)
      expect(d.processed_time).toBeInstanceOf(Date)
    }
    expect(new Set(deadletters.map((d) => d.id)).size).toBe(2)

    const again = await sync(pipeline)
    expect(again.stdout).toMatch(/rows=0 /)
    expect(await pgRows(`SELECT count(*)::int AS n FROM "${schema}".events`)).toEqual([{ n: 3 }])
    expect(await pgRows(`SELECT count(*)::int AS n FROM "${schema}"._dl_events`)).toEqual([{ n: 2 }])
  })

  it('DuckDB: the same rows land in _dl_<pipeline> beside the data, the rest once', async () => {
    await p.write('events.csv', BAD_BYTES_CSV)
    const pipeline = {
      source: 'path: events.csv, format: csv',
      sink: 'Duckdb: { path: ./warehouse.duckdb }',
      deadletters: 'Duckdb: { path: ./warehouse.duckdb }',
    }
    await sync(pipeline)
    await sync(pipeline)
    const warehouse = path.join(p.dir, 'warehouse.duckdb')
    expect(await duckdb(warehouse, 'SELECT id, name FROM events ORDER BY id')).toEqual([
      { id: 1, name: 'a' },
      { id: 3, name: 'c' },
      { id: 5, name: 'e' },
    ])
    expect(await duckdb(warehouse, 'SELECT record, offset_pos FROM _dl_events ORDER BY offset_pos')).toEqual([
      { record: '2,b\uFFFDc', offset_pos: 3n },
      { record: '4,\uFFFDd', offset_pos: 5n },
    ])
  })

  it('File: deadletters are JSON lines under <path>/_dl_<pipeline>', async () => {
    await p.write('events.csv', BAD_BYTES_CSV)
    await sync({
      source: 'path: events.csv, format: csv',
      sink: 'Duckdb: { path: ./warehouse.duckdb }',
      deadletters: 'File: { path: ./rejects, format: jsonl }',
    })
    const dir = path.join(p.dir, 'rejects', '_dl_events')
    const lines = (await filesText(dir))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { record: string; offset_pos: number })
    expect(lines.map((l) => [l.record, l.offset_pos])).toEqual([
      ['2,b\uFFFDc', 3],
      ['4,\uFFFDd', 5],
    ])
  })

  it('without a deadletter sink: dropped, logged and counted in sync_complete', async () => {
    await p.write('events.csv', BAD_BYTES_CSV)
    const run = await sync(
      { source: 'path: events.csv, format: csv', sink: 'Duckdb: { path: ./warehouse.duckdb }' },
      'json',
    )
    const complete = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((e) => e.event === 'sync_complete')
    expect(complete).toMatchObject({ total_rows: 3, deadletter_rows: 2, discarded_rows: 2 })
    expect(await p.logs()).toContain(
      'Discarded 2 deadletter records because no deadletter sink is configured',
    )
  })

  it('a configured schema: a value its column cannot hold is a deadletter, not a failed file', async () => {
    await p.write('events.csv', 'id,name\n1,a\nx,b\n3,c\n')
    const schema = pgSchema.name()
    await sync({
      source:
        'path: events.csv, format: csv, schema: [{ name: id, type: int }, { name: name, type: string }]',
      sink: postgresSink(schema),
      deadletters: postgresSink(schema),
    })
    expect(await pgRows(`SELECT id FROM "${schema}".events ORDER BY id`)).toEqual([{ id: 1 }, { id: 3 }])
    expect(await pgRows(`SELECT record, offset_pos FROM "${schema}"._dl_events`)).toEqual([
      { record: 'x,b', offset_pos: '3' },
    ])
  })
})

describe('a line that is not JSON, after the sample', () => {
  // 300 KB of good lines first: the inference sample (256 KiB) never sees the bad one.
  const good = Array.from({ length: 6000 }, (_, i) => `{"id":${i + 1},"name":"${'n'.repeat(40)}"}`)
  const lines = [...good, '{"id":6001,"name":', ...['{"id":6002,"name":"z"}']]

  it.each([
    ['PostgreSQL', (schema: string) => postgresSink(schema)],
    ['DuckDB', () => 'Duckdb: { path: ./warehouse.duckdb }'],
  ])('%s: is a deadletter; every other line lands once', async (kind, sinkOf) => {
    await p.write('events.jsonl', `${lines.join('\n')}\n`)
    const schema = pgSchema.name()
    const pipeline = {
      source: 'path: events.jsonl, format: jsonl',
      sink: sinkOf(schema),
      deadletters: sinkOf(schema),
    }
    await sync(pipeline)
    await sync(pipeline)
    const read = (sql: string) =>
      kind === 'DuckDB'
        ? duckdb(path.join(p.dir, 'warehouse.duckdb'), sql)
        : pgRows(sql.replaceAll('main.', `"${schema}".`))
    expect(
      await read(
        'SELECT count(*)::int AS n, count(DISTINCT id)::int AS ids, max(id) AS top FROM main.events',
      ),
    ).toEqual([{ n: 6001, ids: 6001, top: 6002 }])
    expect(await read('SELECT record FROM main._dl_events')).toEqual([{ record: '{"id":6001,"name":' }])
  })
})

describe('rows the destination refuses', () => {
  it('PostgreSQL: rows a constraint refuses land in _dl_<pipeline>, named by the batch; the rest once', async () => {
    const schema = pgSchema.name()
    await pgSchema.admin.query(`CREATE SCHEMA "${schema}"`)
    await pgSchema.admin.query(
      `CREATE TABLE "${schema}".events (id integer, name text CHECK (name <> 'refuse-me'))`,
    )
    await p.write('events.csv', 'id,name\n1,a\n2,refuse-me\n3,c\n4,refuse-me\n')
    const pipeline = {
      source: 'path: events.csv, format: csv',
      sink: postgresSink(schema),
      deadletters: postgresSink(schema),
    }
    await sync(pipeline)
    await sync(pipeline)
    expect(await pgRows(`SELECT id FROM "${schema}".events ORDER BY id`)).toEqual([{ id: 1 }, { id: 3 }])
    const deadletters = await pgRows(
      `SELECT record, error, failure_code, offset_key FROM "${schema}"._dl_events ORDER BY record`,
    )
    expect(deadletters).toMatchObject([
      { record: '2,refuse-me', failure_code: '23514', offset_key: expect.stringMatching(/^batch events\//) },
      { record: '4,refuse-me', failure_code: '23514' },
    ])
    expect(deadletters[0]?.error).toMatch(/check constraint/i)
  })

  // With its column declared `int`, the source sets `abc` aside itself (no number has a `b`) and passes
  // `99999999999` (digits only) on: beyond an int, the destination refuses it.
  it.each([
    [
      'DuckDB',
      'Duckdb: { path: ./warehouse.duckdb }',
      () => duckdb(path.join(p.dir, 'warehouse.duckdb'), 'SELECT id, name FROM events ORDER BY id'),
    ],
    [
      'File (parquet)',
      'File: { path: ./out, format: parquet }',
      () =>
        duckRows(
          `SELECT id, name FROM read_parquet('${path.join(p.dir, 'out', 'events', '**', '*.parquet')}') ORDER BY id`,
        ),
    ],
  ])(
    '%s: a value its int column cannot hold is a deadletter; every other row lands once',
    async (_, sink, landed) => {
      await p.write('events.csv', 'id,name\n1,a\nabc,b\n99999999999,c\n4,d\n')
      const pipeline = {
        source:
          'path: events.csv, format: csv, schema: [{ name: id, type: int }, { name: name, type: string }]',
        sink,
        deadletters: 'File: { path: ./rejects, format: jsonl }',
      }
      const run = await sync(pipeline)
      expect(run.stdout).toMatch(/rows=2 deadletters=2 /)
      expect((await sync(pipeline)).stdout).toMatch(/rows=0 /)
      expect(await landed()).toEqual([
        { id: 1, name: 'a' },
        { id: 4, name: 'd' },
      ])
      const dir = path.join(p.dir, 'rejects', '_dl_events')
      const deadletters = (await filesText(dir))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .sort((a, b) => String(a.record).localeCompare(String(b.record)))
      expect(deadletters).toMatchObject([
        {
          record: '99999999999,c',
          offset_key: expect.stringMatching(/^batch events\/.* row$/),
          offset_pos: 1,
        },
        { record: 'abc,b', failure_code: 'SKIPPR_FILE_BAD_RECORD', offset_key: 'line', offset_pos: 3 },
      ])
      expect(deadletters[0]?.error).toMatch(/99999999999/)
    },
  )
})

describe('a batch no retry can land: the escape hatch', () => {
  it('SHOW PIPELINE names it with its attempts and error; DEADLETTER BATCH moves it whole; the rest lands once', async () => {
    const schema = pgSchema.name()
    // The destination refuses every insert for a reason that is not about rows (an access rule).
    await pgSchema.admin.query(`CREATE SCHEMA "${schema}"`)
    await pgSchema.admin.query(`CREATE TABLE "${schema}".events (id integer, name text)`)
    await pgSchema.admin.query(
      `CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS
         $$ BEGIN RAISE EXCEPTION 'inserts are closed' USING ERRCODE = '42501'; END $$`,
    )
    await pgSchema.admin.query(
      `CREATE TRIGGER refuse BEFORE INSERT ON "${schema}".events FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse()`,
    )
    const ids = Array.from({ length: 40 }, (_, i) => i + 1)
    await p.write('events.csv', `id,name\n${ids.map((id) => `${id},n${id}`).join('\n')}\n`)
    const pipeline = {
      source: 'path: events.csv, format: csv',
      sink: postgresSink(schema),
      deadletters: postgresSink(schema),
      extra: 'buffer_threshold_bytes: 100',
    }
    const failed = await sync(pipeline, 'text', 1)
    expect(failed.stderr).toMatch(/DEADLETTER BATCH 1 IN PIPELINE events/)

    const shown = await query('SHOW PIPELINE events')
    expect(shown.code).toBe(0)
    const document = JSON.parse(shown.stdout) as { wal: { pending: Record<string, unknown>[] } }
    const [first] = document.wal.pending
    expect(first).toMatchObject({
      seq: '1',
      attempts: 1,
      last_error: expect.stringMatching(/inserts are closed/),
    })
    expect(first?.failing_since).toEqual(expect.any(String))

    const wrong = await query('DEADLETTER BATCH 2 IN PIPELINE events')
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(/batch 1 is/)

    const moved = await query('DEADLETTER BATCH 1 IN PIPELINE events')
    expect(moved.stderr).toBe('')
    expect(moved.stdout).toMatch(/moved to deadletter_sinks\.rejects/)
    const set = await pgRows(`SELECT record, failure_code FROM "${schema}"._dl_events`)
    expect(set.length).toBeGreaterThan(0)
    expect(set.every((d) => d.failure_code === 'SKIPPR_BATCH_DEADLETTERED')).toBe(true)

    await pgSchema.admin.query(`DROP TRIGGER refuse ON "${schema}".events`)
    await sync(pipeline)
    // Every id once: in the table, or (the batch set aside) in the deadletters; the source was not read again.
    const landed = (await pgRows(`SELECT id FROM "${schema}".events`)).map((r) => Number(r.id))
    const aside = set.map((d) => Number(String(d.record).split(',')[0]))
    expect([...landed, ...aside].sort((a, b) => a - b)).toEqual(ids)
  })
})
