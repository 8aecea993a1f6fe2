/**
 * `skipprd query` benchmark (issue 6): `SELECT count(*), avg(duration_s) FROM bikehire.rentals`
 * over a 1,000,000-row pending WAL, beside the same query over the same rows already in a DuckDB
 * table, in one run. Target: ≤ 3× the in-table time.
 *
 * The WAL is filled by a real `skipprd sync --once` (Sample source, no destination). The table is
 * loaded from a CSV of the same rows with DuckDB's own read_csv. Each side is timed from opening
 * its database to the last row read, in this process (median of several runs):
 *
 *   table         DuckDBInstance on the table's file, the query, close
 *   WAL (cached)  a query session: snapshot of the WAL, its query cache brought up to date (nothing
 *                 new to load), the query, close — what every query after the first costs
 *   WAL (cold)    the same with SKIPPR_QUERY_CACHE=off: every pending row parsed from the WAL
 *
 * and, as a user sees it, a whole `skipprd query --plain -s …` process beside a node process that
 * opens the table and runs the query.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench query
 * Env:  SKIPPR_BENCH_QUERY_ROWS  rows (default 1,000,000)
 *       SKIPPR_BENCH_RUNS        timed runs per side (default 5)
 *       SKIPPR_BENCH_DIR         where the temporary data goes (default: the OS temp dir)
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { bikehireSchema, writeBikehireFile } from '@skippr/source-sample'
import { ensureOk, measure } from './lib/process.js'
import { machineLine, median, table } from './lib/report.js'
import { defaultsEnv, skipprdCli } from './lib/skipprd.js'
import { queryTable } from './lib/table-query.mjs'

const ROWS = Number(process.env.SKIPPR_BENCH_QUERY_ROWS ?? 1_000_000)
const RUNS = Number(process.env.SKIPPR_BENCH_RUNS ?? 5)
const SQL = 'SELECT count(*), avg(duration_s) FROM bikehire.rentals'
const TARGET = 3

/** The shipped query session, from skipprd's build (its package exports only the public API). */
interface Session {
  execute(sql: string): Promise<{ kind: string; chunks?: AsyncIterable<(string | null)[][]> }>
  close(): Promise<void>
}

async function main(): Promise<void> {
  console.log(machineLine(`skipprd query bench, ${ROWS.toLocaleString('en')} rows`))
  const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-query-'))
  try {
    await writeFile(
      path.join(dir, 'skippr.yml'),
      [
        'data_sources:',
        '  sample:',
        `    Sample: { dataset: bikehire, rows: ${ROWS} }`,
        'pipelines:',
        '  bikehire:',
        '    data_source: data_sources.sample',
        '',
      ].join('\n'),
    )
    const cli = skipprdCli()
    ensureOk(
      'sync',
      await measure(process.execPath, [cli, 'sync', '-p', 'bikehire', '--once', '--output', 'text'], {
        cwd: dir,
        env: defaultsEnv(),
      }),
    )
    const tableFile = path.join(dir, 'table.duckdb')
    await loadTable(dir, tableFile)

    const openSession = await sessionFactory(dir)
    const answers = new Set<string>()
    const timeTable = () => timed(async () => answers.add(await queryTable(tableFile, SQL)))
    const timeWal = (cache: 'on' | 'off') =>
      timed(async () => {
        const session = await openSession(cache)
        try {
          answers.add(await queryWal(session))
        } finally {
          await session.close()
        }
      })

    await timeWal('on') // fills the query cache: the cached runs find nothing new
    const tableMs: number[] = []
    const cachedMs: number[] = []
    const coldMs: number[] = []
    // Interleaved, so both sides meet the same machine load.
    for (let i = 0; i < RUNS; i++) {
      tableMs.push(await timeTable())
      cachedMs.push(await timeWal('on'))
      coldMs.push(await timeWal('off'))
    }
    if (answers.size !== 1) throw new Error(`the two sides disagree: ${[...answers].join(' vs ')}`)

    const env = defaultsEnv()
    const tableScript = path.join(import.meta.dirname, 'lib', 'table-query.mjs')
    const processTable: number[] = []
    const processWal: number[] = []
    for (let i = 0; i < RUNS; i++) {
      processTable.push(
        ensureOk('node + table', await measure(process.execPath, [tableScript, tableFile, SQL], { env })).ms,
      )
      processWal.push(
        ensureOk(
          'skipprd query',
          await measure(process.execPath, [cli, 'query', '--plain', '-s', SQL], { cwd: dir, env }),
        ).ms,
      )
    }

    const t = median(tableMs)
    const row = (what: string, ms: number, base: number) => [
      what,
      `${ms.toFixed(1)} ms`,
      `${(ms / base).toFixed(2)}×`,
    ]
    console.log(`answer on both sides: ${[...answers][0]}`)
    console.log(
      table([
        ['side', 'median', 'vs table'],
        row('table (DuckDB file)', t, t),
        row('WAL, query cache up to date', median(cachedMs), t),
        row('WAL, cache off (parse every row)', median(coldMs), t),
        row('process: node + table', median(processTable), median(processTable)),
        row('process: skipprd query (cached)', median(processWal), median(processTable)),
      ]),
    )
    const ratio = median(cachedMs) / t
    console.log(
      `ratio (WAL with cache / table): ${ratio.toFixed(2)}× — target ≤ ${TARGET}× ${ratio <= TARGET ? 'met' : 'NOT met'}`,
    )
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The same rows as the Sample source gave the WAL, loaded by DuckDB's read_csv with the saved schema's types. */
async function loadTable(dir: string, file: string): Promise<void> {
  const csv = path.join(dir, 'rentals.csv')
  await writeBikehireFile(csv, { rows: ROWS, format: 'csv' })
  const types: Record<string, string> = {
    long: 'BIGINT',
    int: 'INTEGER',
    timestamp: 'TIMESTAMPTZ',
    string: 'VARCHAR',
    double: 'DOUBLE',
  }
  const columns = bikehireSchema.fields.map((f) => `'${f.name}': '${types[f.type]}'`).join(', ')
  const instance = await DuckDBInstance.create(file)
  const conn = await instance.connect()
  await conn.run('CREATE SCHEMA bikehire')
  await conn.run(
    `CREATE TABLE bikehire.rentals AS SELECT * FROM read_csv('${csv}', header = true, columns = {${columns}})`,
  )
  conn.closeSync()
  instance.closeSync()
  await rm(csv)
}

async function queryWal(session: Session): Promise<string> {
  const result = await session.execute(SQL)
  const rows: (string | null)[][] = []
  for await (const chunk of result.chunks ?? []) rows.push(...chunk)
  return JSON.stringify(rows[0])
}

/** Opens query sessions on the project in `dir`, through skipprd's own config loading. */
async function sessionFactory(dir: string): Promise<(cache: 'on' | 'off') => Promise<Session>> {
  const root = path.dirname(createRequire(import.meta.url).resolve('skipprd/package.json'))
  const load = (file: string) => import(pathToFileURL(path.join(root, 'dist', file)).href)
  const { loadConfigFile } = await load('config/load.js')
  const { QuerySession } = await load('query/sql-session.js')
  return (cache) => {
    const file = loadConfigFile({ cwd: dir, env: { ...defaultsEnv(), SKIPPR_QUERY_CACHE: cache } })
    return QuerySession.open({ file, flags: {}, cwd: dir, warn: (m: string) => console.warn(m) })
  }
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await work()
  return performance.now() - started
}

await main()
