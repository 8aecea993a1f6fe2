/**
 * `skipprd sync --once` end to end (issue 5, Speed), each part beside its raw limit in the same run:
 *
 *  (1) a 1,000,000-row bikehire CSV through the File source (WAL on, default settings) into
 *      PostgreSQL, vs `psql \copy … FROM 'file' WITH (FORMAT csv, HEADER)` into an identical table.
 *      Target ≥ 0.8×. Beside it, the floor: a bare Node process that only COPYs the file
 *      (lib/pg-floor.mjs), so a shortfall can be told apart into the machine's and skipprd's own.
 *  (2) the same file into DuckDB, vs DuckDB's own `CREATE TABLE t AS SELECT * FROM read_csv('file')`.
 *      Target ≥ 0.5×. Beside it, the floor: a bare Node process that only lands the file as the sink
 *      groups it, through load files (lib/duckdb-floor.mjs).
 *  (3) peak RSS of the skipprd process in (1) and (2). Target ≤ 300 MB.
 *  (4) `skipprd --help` start-up, median of 10, beside `node -e 0`. Target ≤ 150 ms.
 *
 * skipprd is the BUILT CLI run as a child process and timed from spawn to exit. psql is timed the
 * same way; read_csv runs in a Node process of its own (lib/read-csv.mjs), timed around the one
 * statement, the strictest limit, with its whole process shown beside it. Every load is checked for
 * its row count.
 *
 * (1) and (2) run SKIPPR_BENCH_E2E_ROUNDS times, each round a skipprd run and its raw limit back to
 * back, in turns going first; a ratio is taken within each round and the median counts, with the
 * range beside it. One pair alone moves by ±10% with the load of a shared machine.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench e2e
 * Env:  SKIPPR_BENCH_E2E_ROWS  rows in the file (default 1,000,000)
 *       SKIPPR_BENCH_E2E_ROUNDS rounds of (1) and (2) (default 3)
 *       SKIPPR_BENCH_PROFILE   1: run skipprd under `node --cpu-prof` and print its top functions
 *                              (slows it down: the ratios are then not the benchmark's)
 *       SKIPPR_BENCH_DIR       where the temporary data goes (default: the OS temp dir)
 *       SKIPPR_TEST_PG_URL     the PostgreSQL server (default: the local `test` database)
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { type NamespaceSchema, silentLogger } from '@skippr/connector-api'
import { DuckdbSink } from '@skippr/sink-duckdb'
import { PostgresSink } from '@skippr/sink-postgres'
import { FileSource } from '@skippr/source-file'
import { writeBikehireFile } from '@skippr/source-sample'
import { stringify } from 'yaml'
import { topSelfTimes } from './lib/cpu-profile.js'
import { countRows, freshSchema, PG_URL, psqlCopy } from './lib/postgres.js'
import { ensureOk, type Measured, measure } from './lib/process.js'
import { formatRate, machineLine, median, table } from './lib/report.js'
import { defaultsEnv, skipprdCli } from './lib/skipprd.js'

const ROWS = Number(process.env.SKIPPR_BENCH_E2E_ROWS ?? 1_000_000)
const PROFILE = process.env.SKIPPR_BENCH_PROFILE === '1'
const ROUNDS = Number(process.env.SKIPPR_BENCH_E2E_ROUNDS ?? 3)
const STARTS = 10
const MB = 1024 * 1024
const TARGET = { postgres: 0.8, duckdb: 0.5, rssMb: 300, helpMs: 150 }
const PG_URL_VARIABLE = 'SKIPPR_BENCH_PG_URL'

interface SkipprdRun extends Measured {
  /** `elapsed_ms` of sync_complete: the sync without process start and exit. */
  readonly syncMs: number
}

const cli = skipprdCli()
const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-e2e-'))
const csv = path.join(dir, 'rentals.csv')

/** `skipprd sync --pipeline e2e --once` of the CSV into `sink`, from a new working dir `name`. */
async function syncOnce(name: string, sink: object, env: Record<string, string> = {}): Promise<SkipprdRun> {
  const workDir = path.join(dir, name)
  await mkdir(workDir)
  const config = path.join(workDir, 'skippr.yml')
  const pipeline = {
    data_source: 'data_sources.rentals',
    data_sink: 'data_sinks.warehouse',
    data_dir: './data',
  }
  await writeFile(
    config,
    stringify({
      data_sources: { rentals: { File: { path: path.relative(workDir, csv), format: 'csv' } } },
      data_sinks: { warehouse: sink },
      pipelines: { e2e: pipeline },
    }),
  )
  const profileDir = path.join(workDir, 'cpu-profile')
  const node = PROFILE ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []
  const args = [...node, cli, 'sync', '--pipeline', 'e2e', '--once', '--output', 'json', '--config', config]
  const run = ensureOk(
    `skipprd sync (${name})`,
    await measure(process.execPath, args, { cwd: workDir, env: defaultsEnv(env) }),
  )
  const complete = run.stdout
    .split('\n')
    .filter((line) => line.includes('"sync_complete"'))
    .map((line) => JSON.parse(line) as { total_rows: number; elapsed_ms: number })[0]
  if (complete?.total_rows !== ROWS)
    throw new Error(`skipprd (${name}) wrote ${complete?.total_rows} rows, expected ${ROWS}`)
  if (PROFILE) await printProfile(name, profileDir)
  return { ...run, syncMs: complete.elapsed_ms }
}

async function printProfile(name: string, profileDir: string): Promise<void> {
  console.log(`cpu profile of skipprd (${name}), self time:`)
  for (const { name: fn, ms, share } of await topSelfTimes(profileDir, 20))
    console.log(`  ${(share * 100).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(6)} ms  ${fn}`)
}

/** Runs `a` and `b` one after the other, `b` first in odd rounds: neither always gets the warmer machine. */
async function inTurn<A, B>(round: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  if (round % 2 === 0) {
    const first = await a()
    return [first, await b()]
  }
  const second = await b()
  return [await a(), second]
}

const floorScript = fileURLToPath(new URL('lib/pg-floor.mjs', import.meta.url))
const duckdbFloorScript = fileURLToPath(new URL('lib/duckdb-floor.mjs', import.meta.url))

/** The schema the File source infers for the CSV: what skipprd's sinks make their tables from. */
async function inferredSchema(): Promise<NamespaceSchema> {
  const [inferred] = await new FileSource(
    { path: csv, format: 'csv' },
    { configDir: dir, dataDir: dir, pipeline: 'e2e', logger: silentLogger },
  ).discover()
  if (!inferred) throw new Error(`the File source found no schema in ${csv}`)
  return inferred
}

/**
 * A round of (1): skipprd and `psql \copy` in turns, then the floor (lib/pg-floor.mjs), which shows
 * how much of a shortfall this machine and Node impose before skipprd does anything of its own.
 */
async function postgres(round: number): Promise<{ psql: Measured; skipprd: SkipprdRun; floor: Measured }> {
  const schema = await freshSchema('skippr_bench_e2e')
  try {
    // The \copy table is made by the sink's own DDL from the File source's own inference, so it is
    // the table skipprd creates.
    const inferred = await inferredSchema()
    const sink = new PostgresSink({ connection_string: PG_URL, schema: schema.name }, silentLogger)
    await sink.prepare({ ...inferred, namespace: 'psql_rentals' })
    await sink.prepare({ ...inferred, namespace: 'floor_rentals' })
    await sink.close()
    const [psql, skipprd] = await inTurn(
      round,
      () => psqlCopy(`"${schema.name}"."psql_rentals"`, csv, true),
      () =>
        syncOnce(
          `postgres-${round}`,
          { Postgres: { connection_string: `\${${PG_URL_VARIABLE}}`, schema: schema.name } },
          { [PG_URL_VARIABLE]: PG_URL },
        ),
    )
    const floor = ensureOk(
      'the bare Node COPY',
      await measure(process.execPath, [floorScript, PG_URL, `"${schema.name}"."floor_rentals"`, csv]),
    )
    for (const t of ['psql_rentals', 'rentals', 'floor_rentals']) {
      const landed = await countRows(schema.client, `"${schema.name}"."${t}"`)
      if (landed !== ROWS) throw new Error(`PostgreSQL ${t}: ${landed} rows, expected ${ROWS}`)
    }
    return { psql, skipprd, floor }
  } finally {
    await schema.drop()
  }
}

type ReadCsvRun = Measured & { statementMs: number }

async function duckdb(round: number): Promise<{ readCsv: ReadCsvRun; skipprd: SkipprdRun; floor: Measured }> {
  const script = fileURLToPath(new URL('lib/read-csv.mjs', import.meta.url))
  const name = `duckdb-${round}`
  const [readCsv, skipprd] = await inTurn(
    round,
    async (): Promise<ReadCsvRun> => {
      const baseline = ensureOk(
        'read_csv',
        await measure(process.execPath, [script, path.join(dir, `baseline-${round}.duckdb`), csv]),
      )
      const { ms: statementMs, rows } = JSON.parse(baseline.stdout) as { ms: number; rows: number }
      if (rows !== ROWS) throw new Error(`DuckDB read_csv: ${rows} rows, expected ${ROWS}`)
      return { ...baseline, statementMs }
    },
    () => syncOnce(name, { Duckdb: { path: './warehouse.duckdb' } }),
  )
  // The floor's table is made by the sink's own DDL, so it is the table skipprd creates.
  const floorDir = path.join(dir, `duckdb-floor-${round}`)
  await mkdir(floorDir)
  const sink = new DuckdbSink(
    { path: 'floor.duckdb', schema: 'main' },
    { configDir: floorDir, dataDir: floorDir },
  )
  await sink.prepare(await inferredSchema())
  await sink.close()
  const floorFile = path.join(floorDir, 'floor.duckdb')
  const floor = ensureOk(
    'the bare Node DuckDB load',
    await measure(process.execPath, [duckdbFloorScript, floorFile, 'rentals', csv]),
  )
  for (const file of [path.join(dir, name, 'warehouse.duckdb'), floorFile]) {
    const landed = await duckdbCount(file, 'rentals')
    if (landed !== ROWS) throw new Error(`DuckDB rentals in ${file}: ${landed} rows, expected ${ROWS}`)
  }
  return { readCsv, skipprd, floor }
}

async function duckdbCount(file: string, table: string): Promise<number> {
  const instance = await DuckDBInstance.create(file)
  const connection = await instance.connect()
  try {
    return Number((await connection.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0]?.[0])
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

async function startup(): Promise<{ helpMs: number; nodeMs: number }> {
  const times = { help: [] as number[], node: [] as number[] }
  for (let i = 0; i < STARTS; i++) {
    times.help.push(ensureOk('skipprd --help', await measure(process.execPath, [cli, '--help'])).ms)
    times.node.push(ensureOk('node -e 0', await measure(process.execPath, ['-e', '0'])).ms)
  }
  return { helpMs: median(times.help), nodeMs: median(times.node) }
}

const verdict = (ok: boolean) => (ok ? 'yes' : 'NO')

/** The median ratio of the rounds, with their range. */
function ratioCell(ratios: readonly number[]): string {
  const range =
    ratios.length > 1 ? ` (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})` : ''
  return `${median(ratios).toFixed(2)}×${range}`
}

try {
  console.log(machineLine('skipprd e2e bench'))
  let started = performance.now()
  await writeBikehireFile(csv, { rows: ROWS, format: 'csv' })
  console.log(
    `generated ${ROWS.toLocaleString('en')} rows of bikehire CSV in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  started = performance.now()
  if (!(ROUNDS >= 1)) throw new Error('SKIPPR_BENCH_E2E_ROUNDS must be at least 1')
  const pgRounds: Awaited<ReturnType<typeof postgres>>[] = []
  const duckRounds: Awaited<ReturnType<typeof duckdb>>[] = []
  for (let round = 0; round < ROUNDS; round++) {
    pgRounds.push(await postgres(round))
    duckRounds.push(await duckdb(round))
  }
  const start = await startup()

  const pgRatios = pgRounds.map((r) => r.psql.ms / r.skipprd.ms)
  const duckRatios = duckRounds.map((r) => r.readCsv.statementMs / r.skipprd.ms)
  const floorRatios = pgRounds.map((r) => r.psql.ms / r.floor.ms)
  const duckFloorRatios = duckRounds.map((r) => r.readCsv.statementMs / r.floor.ms)
  const pgRatio = median(pgRatios)
  const duckRatio = median(duckRatios)
  const ms = (runs: readonly Measured[]) => median(runs.map((run) => run.ms))
  const syncMs = (runs: readonly SkipprdRun[]) => median(runs.map((run) => run.syncMs))
  const pgSkipprd = pgRounds.map((r) => r.skipprd)
  const duckSkipprd = duckRounds.map((r) => r.skipprd)
  const peak = (runs: readonly Measured[]) => Math.max(...runs.map((run) => run.peakRss ?? 0)) / MB
  const rssMb = Math.max(peak(pgSkipprd), peak(duckSkipprd))
  const mb = (runs: readonly Measured[]) =>
    runs.some((run) => run.peakRss === undefined) ? '?' : `${peak(runs).toFixed(0)} MB`
  const statementMs = median(duckRounds.map((r) => r.readCsv.statementMs))
  const rows: string[][] = [
    ['part', 'skipprd', 'raw limit', 'ratio', 'target', 'met'],
    [
      '(1) → PostgreSQL',
      `${formatRate(ROWS, ms(pgSkipprd))} (sync ${formatRate(ROWS, syncMs(pgSkipprd))})`,
      `psql \\copy ${formatRate(ROWS, ms(pgRounds.map((r) => r.psql)))}`,
      ratioCell(pgRatios),
      `≥ ${TARGET.postgres}×`,
      verdict(pgRatio >= TARGET.postgres),
    ],
    [
      '    floor',
      `bare Node COPY ${formatRate(ROWS, ms(pgRounds.map((r) => r.floor)))}`,
      'psql \\copy',
      ratioCell(floorRatios),
      '',
      '',
    ],
    [
      '(2) → DuckDB',
      `${formatRate(ROWS, ms(duckSkipprd))} (sync ${formatRate(ROWS, syncMs(duckSkipprd))})`,
      `read_csv ${formatRate(ROWS, statementMs)} (process ${formatRate(ROWS, ms(duckRounds.map((r) => r.readCsv)))})`,
      ratioCell(duckRatios),
      `≥ ${TARGET.duckdb}×`,
      verdict(duckRatio >= TARGET.duckdb),
    ],
    [
      '    floor',
      `bare Node load ${formatRate(ROWS, ms(duckRounds.map((r) => r.floor)))}`,
      'read_csv',
      ratioCell(duckFloorRatios),
      '',
      '',
    ],
    [
      '(3) peak RSS',
      `${rssMb.toFixed(0)} MB (pg ${mb(pgSkipprd)}, duckdb ${mb(duckSkipprd)})`,
      `read_csv process ${mb(duckRounds.map((r) => r.readCsv))}`,
      '',
      `≤ ${TARGET.rssMb} MB`,
      verdict(rssMb > 0 && rssMb <= TARGET.rssMb),
    ],
    [
      '(4) --help start',
      `${start.helpMs.toFixed(0)} ms (median of ${STARTS})`,
      `node -e 0 ${start.nodeMs.toFixed(0)} ms`,
      `${(start.helpMs / start.nodeMs).toFixed(2)}×`,
      `≤ ${TARGET.helpMs} ms`,
      verdict(start.helpMs <= TARGET.helpMs),
    ],
  ]
  console.log(`\n${table(rows)}\n`)
  console.log(
    `skipprd: spawn to exit ("sync": sync_complete's elapsed_ms), medians of ${ROUNDS} rounds. Ratios are the ` +
      "median of the rounds' ratios (their range in brackets), against psql's whole process and the read_csv " +
      'statement alone (its whole process in brackets); peak RSS is the highest of all runs. A floor is a ' +
      'Node process that only lands the file in 10 MiB batches (no WAL, state or config), run after each ' +
      "pair: for PostgreSQL COPY transactions on two connections, for DuckDB the sink's grouped read_csv " +
      'loads of load files. It shows how close a Node process landing the same batches gets on this machine.',
  )
  if (PROFILE) console.log("PROFILED: skipprd ran under --cpu-prof, so these ratios are not the benchmark's.")
  console.log(machineLine(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`))
  if (rows.slice(1).some((r) => r[5] === 'NO')) process.exitCode = 1
} finally {
  await rm(dir, { recursive: true, force: true })
}
