/** The programmatic API, used as the vendor's Python example uses its own. */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { Config, discover, EnvRef, Pipeline, Session, type SyncEvent } from '../src/index.js'
import { rentalCounts } from './support/duckdb.js'
import { type Project, project } from './support/project.js'

const CONFIG = `# Our pipelines
data_sources:
  sample:
    Sample: { dataset: bikehire, rows: 3000 }  # small for tests
data_sinks:
  warehouse:
    Duckdb: { path: ./warehouse.duckdb }
`

let p: Project
beforeEach(async () => {
  p = await project(CONFIG)
})
afterEach(async () => {
  await p.remove()
})

it('adds a pipeline, saves the file keeping its comments, and syncs it with a Session', async () => {
  const config = Config.discover({ cwd: p.dir, env: {} })
  const src = config.getDataSource('sample')
  const sink = config.getDataSink('warehouse')
  expect(sink).toEqual({
    section: 'data_sinks',
    name: 'warehouse',
    type: 'Duckdb',
    reference: 'data_sinks.warehouse',
  })
  config.pipeline('bikehire', new Pipeline({ dataSource: src, dataSink: sink, syncFrequencySeconds: 60 }))
  await config.save()
  const saved = await readFile(path.join(p.dir, 'skippr.yml'), 'utf8')
  expect(saved).toContain('# Our pipelines')
  expect(saved).toContain('# small for tests')
  expect(saved).toMatch(
    /pipelines:\n {2}bikehire:\n {4}data_source: data_sources.sample\n {4}data_sink: data_sinks.warehouse\n {4}sync_frequency_seconds: 60\n/,
  )

  const events: SyncEvent['type'][] = []
  const session = new Session(Config.discover({ cwd: p.dir, env: {} }).getPipeline('bikehire'), {
    cwd: p.dir,
  })
  const result = await session.sync({ once: true, onEvent: (e) => events.push(e.type) })
  expect(result).toMatchObject({ status: 'completed', rowsWritten: 3000, namespaces: 1 })
  expect(events[0]).toBe('start')
  expect(events.at(-1)).toBe('complete')
  expect(await rentalCounts(path.join(p.dir, 'warehouse.duckdb'))).toEqual({ rows: 3000, unique: 3000 })
  expect(await p.logs()).toContain('"msg":"sync complete"')
})

it('discovers a pipeline schema', async () => {
  const config = Config.discover({ cwd: p.dir, env: {} })
  config.pipeline('bikehire', new Pipeline({ dataSource: 'data_sources.sample' }))
  const [schema] = await discover(config.getPipeline('bikehire'), { cwd: p.dir })
  expect(schema?.namespace).toBe('rentals')
  expect(schema?.fields.map((f) => f.name)).toContain('rental_id')
})

it('refuses a pipeline that refers to an undefined entry', () => {
  const config = Config.discover({ cwd: p.dir, env: {} })
  expect(() => config.pipeline('x', new Pipeline({ dataSource: 'data_sources.nope' }))).toThrow(
    'skippr.yml: pipelines.x.data_source: data_sources.nope is not defined: define it under data_sources, or use one of data_sources.sample',
  )
  expect(() => config.getPipeline('x')).toThrow(
    "Pipeline 'x' not found in skippr.yml: it defines no pipelines",
  )
})

it('refuses to save a JSON config as YAML, and leaves it as it was', async () => {
  await p.remove()
  p = await project()
  const json = JSON.stringify({ data_sources: { sample: { Sample: { dataset: 'bikehire', rows: 10 } } } })
  await p.write('skipprd.json', json)
  const config = Config.discover({ cwd: p.dir, env: {} })
  config.pipeline('bikehire', new Pipeline({ dataSource: 'data_sources.sample' }))
  await expect(config.save()).rejects.toThrow(
    'skipprd.json: skipprd writes config files as YAML and will not rewrite this JSON file',
  )
  expect(await readFile(path.join(p.dir, 'skipprd.json'), 'utf8')).toBe(json)
})

it('builds connector entries with EnvRef secrets, checked against the connector when saved', async () => {
  const config = Config.discover({ cwd: p.dir, env: {} })
  const before = await readFile(path.join(p.dir, 'skippr.yml'), 'utf8')
  config.dataSource('orders_db', 'Postgres', {
    connection_string: 'postgres://app:s3cr3t-pw@db.internal/shop',
    tables: ['orders'],
  })
  await expect(config.save()).rejects.toThrow(
    'skippr.yml: data_sources.orders_db.Postgres.connection_string: a secret must not be written in the file',
  )
  expect(await readFile(path.join(p.dir, 'skippr.yml'), 'utf8')).toBe(before)

  const orders = config.dataSource('orders_db', 'Postgres', {
    connection_string: new EnvRef('ORDERS_DB_URL'),
    tables: ['orders'],
  })
  expect(orders.reference).toBe('data_sources.orders_db')
  config.pipeline('orders', new Pipeline({ dataSource: orders }))
  await config.save()
  const saved = await readFile(path.join(p.dir, 'skippr.yml'), 'utf8')
  expect(saved).toContain('# small for tests')
  expect(saved).toContain(
    `  orders_db:\n    Postgres:\n      connection_string: \${ORDERS_DB_URL}\n      tables:\n        - orders\n`,
  )
  // The connector's own schema is checked too, not only the file's structure.
  config.dataSink('out', 'Duckdb', { path: './w.duckdb', no_such_field: 1 })
  await expect(config.save()).rejects.toThrow('no_such_field')
  expect(() => new EnvRef('1BAD')).toThrow('a variable name is letters, digits and _')
})

it("reads a pipeline's rows with df() and query(), and checks its set-up with doctor()", async () => {
  const config = Config.discover({ cwd: p.dir, env: {} })
  config.pipeline(
    'bikehire',
    new Pipeline({ dataSource: 'data_sources.sample', dataSink: 'data_sinks.warehouse' }),
  )
  await config.save()
  const session = new Session(Config.discover({ cwd: p.dir, env: {} }).getPipeline('bikehire'), {
    cwd: p.dir,
  })
  expect(await session.df()).toEqual({ header: [], rows: [] })
  await session.sync({ once: true })

  const frame = await session.df('rentals')
  expect(frame.header).toContain('rental_id')
  expect(frame.rows).toHaveLength(3000)
  const ids = frame.rows.map((row) => row[frame.header.indexOf('rental_id')])
  expect(new Set(ids).size).toBe(3000)

  expect(
    await session.query('SELECT count(*) AS n, count(DISTINCT rental_id) AS d FROM bikehire.rentals'),
  ).toEqual({
    kind: 'rows',
    header: ['n', 'd'],
    rows: [['3000', '3000']],
  })
  expect(await session.query('SHOW PIPELINE bikehire')).toMatchObject({ kind: 'document' })
  await expect(session.query('SELECT 1; SELECT 2')).rejects.toThrow('query() runs one statement, got 2')

  const report = await session.doctor()
  expect(report.ok, JSON.stringify(report.checks)).toBe(true)
  expect(report.checks.map((check) => check.name)).toEqual(
    expect.arrayContaining(['config', 'env', 'connectors']),
  )
})
