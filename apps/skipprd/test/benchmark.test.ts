/**
 * `skipprd benchmark --sink <name>` as an operator runs it, against a destination that already holds
 * their own pipeline's table: a DuckDB file and a fresh PostgreSQL database (override the server
 * with SKIPPR_TEST_PG_URL).
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readdir } from 'node:fs/promises'
import path from 'node:path'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { exited, runCli, spawnCli } from './support/cli.js'
import { query } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
/** The operator's own pipeline: its rows must be there, untouched, after a benchmark. */
const OWN_ROWS = 100
const BENCH_ROWS = 20_000
const TIMEOUT_MS = 120_000

let p: Project
/** The CLI's temporary directory (TMPDIR), to see that the benchmark leaves nothing there. */
let tmp: string

beforeEach(async () => {
  p = await project()
  tmp = path.join(p.dir, 'tmp')
  await mkdir(tmp)
})
afterEach(async () => {
  await p.remove()
})

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { cwd: p.dir, env: { TMPDIR: tmp, ...env }, timeoutMs: TIMEOUT_MS })

const benchmark = (args: string[] = [], env: Record<string, string> = {}) =>
  cli(['benchmark', '--sink', 'warehouse', '--rows', String(BENCH_ROWS), '--rounds', '1', ...args], env)

/** The operator's own sync, so the destination holds their table and ledger rows first. */
async function ownSync(env: Record<string, string> = {}): Promise<void> {
  const run = await cli(['sync', '--pipeline', 'bikehire', '--once', '--output', 'text'], env)
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
}

interface JsonLoad {
  rows: number
  rows_per_second: number
  wall_seconds: number
  cpu_seconds: number
}

describe('skipprd benchmark into DuckDB', () => {
  beforeEach(async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: OWN_ROWS }))
    await ownSync()
  })

  const warehouse = () => path.join(p.dir, 'warehouse.duckdb')

  async function expectOnlyOwnData(): Promise<void> {
    const tables = await query(warehouse(), 'SELECT table_name FROM duckdb_tables() ORDER BY table_name')
    expect(tables.map((t) => t.table_name)).toEqual(['_skippr_batches', '_skippr_fences', 'rentals'])
    expect(await query(warehouse(), 'SELECT count(*)::INT AS n FROM rentals')).toEqual([{ n: OWN_ROWS }])
    const ledger = await query(warehouse(), 'SELECT DISTINCT pipeline FROM _skippr_batches')
    expect(ledger).toEqual([{ pipeline: 'bikehire' }])
    expect(await query(warehouse(), 'SELECT pipeline FROM _skippr_fences')).toEqual([
      { pipeline: 'bikehire' },
    ])
    expect(await readdir(tmp)).toEqual([])
  }

  it(
    "prints skipprd's rate beside read_csv's and their ratio, and leaves only the operator's own data",
    async () => {
      const run = await benchmark()
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(
        /^skipprd benchmark: 20,000 bikehire rows \(a CSV file\) into data_sinks\.warehouse \(Duckdb\), 1 round\n/,
      )
      expect(run.stdout).toMatch(
        /round 1: skipprd [\d,]+ rows\/s \([\d.]+ s, CPU [\d.]+ s\); bulk load [\d,]+ rows\/s \([\d.]+ s, CPU [\d.]+ s\); ratio \d+\.\d\d×\n/,
      )
      expect(run.stdout).toMatch(/\nskipprd +[\d,]+ rows\/s +[\d.]+ s +[\d.]+ s\n/)
      expect(run.stdout).toMatch(/\nDuckdb bulk load +[\d,]+ rows\/s +[\d.]+ s +[\d.]+ s\n/)
      expect(run.stdout).toMatch(/\nratio \(skipprd \/ Duckdb bulk load\): \d+\.\d\d×\n/)
      expect(run.stdout).not.toMatch(/FAILED|Left in/)
      await expectOnlyOwnData()
    },
    TIMEOUT_MS,
  )

  it(
    '--output json prints one object with both loads of each round, the medians and the ratio',
    async () => {
      const run = await benchmark(['--output', 'json', '--rounds', '2'])
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      const lines = run.stdout.trim().split('\n')
      expect(lines).toHaveLength(1)
      const report = JSON.parse(lines[0] as string)
      const load = {
        rows: BENCH_ROWS,
        rows_per_second: expect.any(Number),
        wall_seconds: expect.any(Number),
        cpu_seconds: expect.any(Number),
      }
      expect(report).toMatchObject({
        sink: 'warehouse',
        type: 'Duckdb',
        rows: BENCH_ROWS,
        left: [],
        ok: true,
      })
      expect(report.rounds).toEqual([
        { skipprd: load, bulk_load: load, ratio: expect.any(Number) },
        { skipprd: load, bulk_load: load, ratio: expect.any(Number) },
      ])
      const rate = (l: JsonLoad) => l.rows / l.wall_seconds
      for (const round of report.rounds as { skipprd: JsonLoad; bulk_load: JsonLoad; ratio: number }[])
        expect(round.ratio).toBeCloseTo(rate(round.skipprd) / rate(round.bulk_load), 2)
      expect(report.ratio.min).toBeLessThanOrEqual(report.ratio.median)
      expect(report.ratio.median).toBeLessThanOrEqual(report.ratio.max)
      await expectOnlyOwnData()
    },
    TIMEOUT_MS,
  )

  it(
    'Ctrl-C mid-run stops it with one line, and its tables are dropped all the same',
    async () => {
      const child = spawnCli(['benchmark', '--sink', 'warehouse', '--rows', '500000', '--rounds', '3'], {
        cwd: p.dir,
        env: { TMPDIR: tmp },
      })
      let stdout = ''
      let stderr = ''
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk
      })
      await new Promise<void>((resolve) =>
        child.stdout?.on('data', (chunk: Buffer) => {
          stdout += chunk
          if (stdout.includes('\n')) resolve()
        }),
      )
      child.kill('SIGINT')
      expect(await exited(child)).toEqual({ code: 1, signal: null })
      expect(stderr).toBe('[skippr] benchmark failed: stopped by SIGINT\n')
      await expectOnlyOwnData()
    },
    TIMEOUT_MS,
  )

  it('an entry that is not in data_sinks is a config error naming the entries there are', async () => {
    const run = await cli(['benchmark', '--sink', 'warehuose'])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('')
    expect(run.stderr).toBe(
      '[skippr] config failed: skippr.yml: --sink warehuose: no data_sinks.warehuose: the entries are warehouse\n',
    )
  })
})

describe('skipprd benchmark into PostgreSQL', () => {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 })
  let database: string
  let url: string
  let client: pg.Client

  beforeAll(async () => {
    await admin.query('SELECT 1')
  })
  afterAll(async () => {
    await admin.end()
  })
  beforeEach(async () => {
    database = `skippr_benchmark_test_${randomBytes(5).toString('hex')}`
    await admin.query(`CREATE DATABASE ${database}`)
    const target = new URL(PG_URL)
    target.pathname = `/${database}`
    url = target.toString()
    client = new pg.Client({ connectionString: url })
    await client.connect()
    await p.write(
      'skippr.yml',
      bikehireConfig({ rows: OWN_ROWS, sink: `Postgres: { connection_string: \${WAREHOUSE_URL} }` }),
    )
    await ownSync({ WAREHOUSE_URL: url })
  })
  afterEach(async () => {
    await client.end()
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  })

  it(
    "prints skipprd's rate beside COPY's and their ratio, and leaves only the operator's own data",
    async () => {
      const run = await benchmark(['--output', 'json'], { WAREHOUSE_URL: url })
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      const report = JSON.parse(run.stdout)
      expect(report).toMatchObject({ sink: 'warehouse', type: 'Postgres', rows: BENCH_ROWS, ok: true })
      expect(report.rounds).toHaveLength(1)
      expect(report.rounds[0].skipprd.rows).toBe(BENCH_ROWS)
      expect(report.rounds[0].bulk_load.rows).toBe(BENCH_ROWS)
      expect(report.skipprd.rows_per_second).toBeGreaterThan(0)
      expect(report.bulk_load.rows_per_second).toBeGreaterThan(0)
      expect(report.ratio.median).toBeGreaterThan(0)

      const tables = await client.query(
        "SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
      )
      expect(tables.rows.map((t) => t.name)).toEqual([
        'public._skippr_batches',
        'public._skippr_fences',
        'public.rentals',
      ])
      expect((await client.query('SELECT count(*)::int AS n FROM rentals')).rows).toEqual([{ n: OWN_ROWS }])
      expect((await client.query('SELECT DISTINCT pipeline FROM _skippr_batches')).rows).toEqual([
        { pipeline: 'bikehire' },
      ])
      expect((await client.query('SELECT pipeline FROM _skippr_fences')).rows).toEqual([
        { pipeline: 'bikehire' },
      ])
      expect(await readdir(tmp)).toEqual([])
    },
    TIMEOUT_MS,
  )
})

describe('skipprd benchmark into a sink without a bulk load', () => {
  it(
    "prints skipprd's rate alone, says why in one line, and names what it could not drop",
    async () => {
      await p.write(
        'skippr.yml',
        bikehireConfig({ rows: OWN_ROWS, sink: 'File: { path: ./out, format: csv }' }),
      )
      const run = await benchmark()
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(/round 1: skipprd [\d,]+ rows\/s \([\d.]+ s, CPU [\d.]+ s\)\n/)
      expect(run.stdout).toContain(
        "\nFile has no bulk load to compare with: skipprd's rate is shown alone.\n",
      )
      const left =
        /\nLeft in data_sinks\.warehouse, to drop by hand: (skippr_benchmark_[0-9a-f]{8}_1)\n/.exec(
          run.stdout,
        )
      expect(left).not.toBeNull()
      expect(await readdir(path.join(p.dir, 'out'))).toEqual([left?.[1]])
    },
    TIMEOUT_MS,
  )
})
