/**
 * `skipprd sync --once` end to end (issue 5, Speed), each part beside its raw limit in the same run:
 *
 *  (1) a 1,000,000-row bikehire CSV through the File source (WAL on, default settings) into
 *      PostgreSQL, vs `psql \copy … FROM 'file' WITH (FORMAT csv, HEADER)` into an identical table.
 *      Target ≥ 0.8×. Beside it, the floor: a bare Node process that only COPYs the file
 *      (lib/pg-floor.mjs), so a shortfall can be told apart into the machine's and skipprd's own;
 *      and the peer: pgloader (lib/pgloader.ts), the tool users pick for CSV → PostgreSQL, with its
 *      defaults, into a table like the others, in the same rotation.
 *  (2) the same file into DuckDB, vs DuckDB's own `CREATE TABLE t AS SELECT * FROM read_csv('file')`.
 *      Target ≥ 0.5×. Beside it, the floor: a bare Node process that only lands the file as the sink
 *      groups it, through load files (lib/duckdb-floor.mjs).
 *  (3) peak RSS of the skipprd process in (1) and (2). Target ≤ 300 MB.
 *  (4) `skipprd --help` start-up, median of 10, beside `node -e 0`. Target ≤ 150 ms.
 *  (5) deadletters set aside by the source: the same file with 0.1% of its rows (1,000, spread
 *      evenly past the head the source samples) holding bytes that are not UTF-8, into each destination with a deadletter sink
 *      in the same destination; good rows landed per second beside the clean run of (1) or (2).
 *      Target ≥ 0.8×.
 *  (6) deadletters refused by the destination, the same 0.1%: PostgreSQL loads the clean file into
 *      a pre-created table with a CHECK constraint they fail, DuckDB a copy whose start_time is a day
 *      no month has (lib/refused-csv.ts). Beside the clean run too, no target.
 *  (7) optional, once: a crash and a rerun. pgloader, then skipprd, loads the clean file into
 *      PostgreSQL, is killed with SIGKILL once half the rows are committed (lib/kill-midway.ts) and
 *      is run again, the same command, to its end; then the table's rows are counted, and its
 *      distinct rental_ids, which must be all of them. skipprd must leave exactly the file's rows;
 *      pgloader's duplicates are reported, no target.
 *
 * skipprd is the BUILT CLI run as a child process and timed from spawn to exit (lib/sync-once.ts),
 * its CPU time (user + system) beside. psql is timed the same way; read_csv runs in a Node process of
 * its own (lib/read-csv.mjs), timed around the one statement, the strictest limit, with its whole
 * process shown beside it. Every load is checked for its row count; after each run of (5) and (6)
 * the data table must hold exactly the good rows and `_dl_e2e` exactly the refused ones
 * (lib/landed-check.ts), or the bench fails. pgloader is installed first when it is missing
 * (lib/install-pgloader.sh, apt).
 *
 * The parts run SKIPPR_BENCH_E2E_ROUNDS times, each round the raw limit and skipprd's runs of one
 * destination back to back, each round starting one further along the list, so none always gets the
 * warmer machine; a ratio is taken within each round and the median counts, with the range beside
 * it. One pair alone moves by ±10% with the load of a shared machine.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench e2e
 * Env:  SKIPPR_BENCH_E2E_ROWS  rows in the file (default 1,000,000)
 *       SKIPPR_BENCH_E2E_ROUNDS rounds of (1), (2), (5) and (6) (default 5)
 *       SKIPPR_BENCH_E2E_REFUSED which deadletter parts run: `source` (5), `destination` (6), comma
 *                              separated, or `none` (default `source,destination`)
 *       SKIPPR_BENCH_E2E_CRASH  1: run (7) too, after the rounds
 *       SKIPPR_BENCH_PROFILE   1: run skipprd under `node --cpu-prof` and print its top functions
 *                              (slows it down: the ratios are then not the benchmark's)
 *       SKIPPR_BENCH_DIR       where the temporary data goes (default: the OS temp dir)
 *       SKIPPR_TEST_PG_URL     the PostgreSQL server (default: the local `test` database)
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { deadletterNamespace, silentLogger } from '@skippr/connector-api'
import { DuckdbSink } from '@skippr/sink-duckdb'
import { PostgresSink } from '@skippr/sink-postgres'
import { writeBikehireFile } from '@skippr/source-sample'
import { type KillOptions, killMidway } from './lib/kill-midway.js'
import { checkLanded, type Expected, type RowsOf } from './lib/landed-check.js'
import { ensurePgloader, PGLOADER, pgloaderArgs } from './lib/pgloader.js'
import { type BenchSchema, committedRows, countRows, freshSchema, PG_URL, psqlCopy } from './lib/postgres.js'
import { ensureOk, type Measured, measure } from './lib/process.js'
import { evenSpoiling, impossibleDay, notUtf8, spoiledSql, writeSpoiledCopy } from './lib/refused-csv.js'
import { cpuCell, formatRate, machineLine, median, ratioCell, table, verdict } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { skipprdCli } from './lib/skipprd.js'
import { inferredSchema, PIPELINE, type SkipprdRun, syncCommand, syncOnce } from './lib/sync-once.js'

const ROWS = Number(process.env.SKIPPR_BENCH_E2E_ROWS ?? 1_000_000)
const PROFILE = process.env.SKIPPR_BENCH_PROFILE === '1'
const ROUNDS = Number(process.env.SKIPPR_BENCH_E2E_ROUNDS ?? 5)
const CRASH = process.env.SKIPPR_BENCH_E2E_CRASH === '1'
const STARTS = 10
const MB = 1024 * 1024
const TARGET = { postgres: 0.8, duckdb: 0.5, rssMb: 300, helpMs: 150, deadletters: 0.8 }
const PG_URL_VARIABLE = 'SKIPPR_BENCH_PG_URL'
/** 0.1% of the rows, spread evenly through the file past its head (lib/refused-csv.ts). */
const SPOILING = evenSpoiling(ROWS, 0.001)
const REFUSED_ROWS = SPOILING.count
const GOOD_ROWS = ROWS - REFUSED_ROWS
const DEADLETTER_TABLE = deadletterNamespace(PIPELINE)

/** Who refuses the rows of a deadletter run: the File source (5) or the destination (6). */
type Refusal = 'source' | 'destination'
const REFUSALS = refusalsToRun(process.env.SKIPPR_BENCH_E2E_REFUSED ?? 'source,destination')

function refusalsToRun(text: string): ReadonlySet<Refusal> {
  const names = text === 'none' ? [] : text.split(',').map((name) => name.trim())
  const unknown = names.find((name) => name !== 'source' && name !== 'destination')
  if (unknown !== undefined) throw new Error(`SKIPPR_BENCH_E2E_REFUSED: unknown part ${unknown}`)
  return new Set(names as Refusal[])
}

const cli = skipprdCli()
const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-e2e-'))
const csv = path.join(dir, 'rentals.csv')
/** The spoiled copies, in directories of their own: a file's name is its namespace, `rentals` for all. */
const notUtf8Csv = path.join(dir, 'not-utf8', 'rentals.csv')
const impossibleDayCsv = path.join(dir, 'impossible-day', 'rentals.csv')

/** What a deadletter run must leave: `byLine` when the source set the rows aside (lib/landed-check.ts). */
const expected = (byLine: boolean): Expected => ({
  rows: ROWS,
  spoiling: SPOILING,
  namespace: 'rentals',
  byLine,
})

const floorScript = fileURLToPath(new URL('lib/pg-floor.mjs', import.meta.url))
const duckdbFloorScript = fileURLToPath(new URL('lib/duckdb-floor.mjs', import.meta.url))

/** A PostgreSQL sink entry for `schema`, its connection string taken from the environment as a user keeps it. */
const postgresEntry = (schema: string) => ({
  Postgres: { connection_string: `\${${PG_URL_VARIABLE}}`, schema },
})
const postgresEnv = { [PG_URL_VARIABLE]: PG_URL }

interface PgRound {
  readonly psql: Measured
  readonly pgloader: Measured
  readonly skipprd: SkipprdRun
  readonly floor: Measured
  readonly source: SkipprdRun | undefined
  readonly destination: SkipprdRun | undefined
}

/**
 * A round of (1), (5) and (6): `psql \copy`, pgloader and skipprd's runs in rotation, each skipprd
 * run in a schema of its own, then the floor (lib/pg-floor.mjs), which shows how much of a shortfall
 * this machine and Node impose before skipprd does anything of its own.
 */
async function postgres(round: number): Promise<PgRound> {
  const schema = await freshSchema('skippr_bench_e2e')
  const sourceSchema = REFUSALS.has('source') ? await freshSchema('skippr_bench_e2e_dl') : undefined
  const destinationSchema = REFUSALS.has('destination') ? await freshSchema('skippr_bench_e2e_dl') : undefined
  try {
    // The \copy and pgloader tables are made by the sink's own DDL from the File source's own
    // inference, so they are the table skipprd creates.
    await prepareTables(schema, ['psql_rentals', 'pgloader_rentals', 'floor_rentals'])
    if (destinationSchema) await prepareCheckedTable(destinationSchema)
    const runs = await inRotation(round, {
      psql: () => psqlCopy(`"${schema.name}"."psql_rentals"`, csv, true),
      pgloader: () => pgloader(`pgloader-${round}`, `"${schema.name}"."pgloader_rentals"`),
      skipprd: () =>
        syncOnce(
          dir,
          {
            name: `postgres-${round}`,
            csv,
            sink: postgresEntry(schema.name),
            env: postgresEnv,
            rows: ROWS,
            deadletters: 0,
          },
          PROFILE,
        ),
      source: sourceSchema && (() => pgRefusedRun(`postgres-source-${round}`, notUtf8Csv, sourceSchema)),
      destination:
        destinationSchema && (() => pgRefusedRun(`postgres-destination-${round}`, csv, destinationSchema)),
    })
    const floor = ensureOk(
      'the bare Node COPY',
      await measure(process.execPath, [floorScript, PG_URL, `"${schema.name}"."floor_rentals"`, csv]),
    )
    for (const t of ['psql_rentals', 'pgloader_rentals', 'rentals', 'floor_rentals']) {
      const landed = await countRows(schema.client, `"${schema.name}"."${t}"`)
      if (landed !== ROWS) throw new Error(`PostgreSQL ${t}: ${landed} rows, expected ${ROWS}`)
    }
    if (sourceSchema) await checkLanded(pgRowsOf(sourceSchema), pgTables(sourceSchema), expected(true))
    if (destinationSchema)
      await checkLanded(pgRowsOf(destinationSchema), pgTables(destinationSchema), expected(false))
    return { ...runs, floor }
  } finally {
    await Promise.all([schema, sourceSchema, destinationSchema].map((s) => s?.drop()))
  }
}

/** pgloader's load of the clean file into `table`, timed as a whole process. */
async function pgloader(name: string, table: string): Promise<Measured> {
  const args = await pgloaderArgs(path.join(dir, name), PG_URL, table, csv)
  return ensureOk('pgloader', await measure(PGLOADER, args))
}

/** Tables `names` in `schema`, made by the sink's own DDL from the File source's inference of the clean file. */
async function prepareTables(schema: BenchSchema, names: readonly string[]): Promise<void> {
  const inferred = await inferredSchema(csv)
  const sink = new PostgresSink({ connection_string: PG_URL, schema: schema.name }, silentLogger)
  try {
    for (const namespace of names) await sink.prepare({ ...inferred, namespace })
  } finally {
    await sink.close()
  }
}

/** (6)'s table, made before the sync as skipprd would make it, with a CHECK the spoiled rows fail. */
async function prepareCheckedTable(schema: BenchSchema): Promise<void> {
  await prepareTables(schema, ['rentals'])
  await schema.client.query(
    `ALTER TABLE "${schema.name}"."rentals" ADD CONSTRAINT bench_spoiled_rows ` +
      `CHECK (NOT ${spoiledSql(SPOILING, 'rental_id')})`,
  )
}

/** A deadletter run into PostgreSQL: the data and its deadletter sink in the same schema. */
function pgRefusedRun(name: string, file: string, schema: BenchSchema): Promise<SkipprdRun> {
  const entry = postgresEntry(schema.name)
  return syncOnce(
    dir,
    {
      name,
      csv: file,
      sink: entry,
      deadletterSink: entry,
      env: postgresEnv,
      rows: GOOD_ROWS,
      deadletters: REFUSED_ROWS,
    },
    PROFILE,
  )
}

const pgRowsOf =
  (schema: BenchSchema): RowsOf =>
  async (sql) =>
    (await schema.client.query<Record<string, unknown>>(sql)).rows

const pgTables = (schema: BenchSchema) => ({
  data: `"${schema.name}"."rentals"`,
  deadletters: `"${schema.name}"."${DEADLETTER_TABLE}"`,
})

type ReadCsvRun = Measured & { statementMs: number }

interface DuckRound {
  readonly readCsv: ReadCsvRun
  readonly skipprd: SkipprdRun
  readonly floor: Measured
  readonly source: SkipprdRun | undefined
  readonly destination: SkipprdRun | undefined
}

/** Data and deadletters in one DuckDB file, as (5) and (6) want them. */
const duckdbEntry = { Duckdb: { path: './warehouse.duckdb' } }
const warehouseOf = (name: string) => path.join(dir, name, 'warehouse.duckdb')

/** A round of (2), (5) and (6): read_csv and skipprd's runs in rotation, then the floor. */
async function duckdb(round: number): Promise<DuckRound> {
  const name = `duckdb-${round}`
  const sourceName = `duckdb-source-${round}`
  const destinationName = `duckdb-destination-${round}`
  const runs = await inRotation(round, {
    readCsv: () => readCsv(round),
    skipprd: () => syncOnce(dir, { name, csv, sink: duckdbEntry, rows: ROWS, deadletters: 0 }, PROFILE),
    source: REFUSALS.has('source') ? () => duckdbRefusedRun(sourceName, notUtf8Csv) : undefined,
    destination: REFUSALS.has('destination')
      ? () => duckdbRefusedRun(destinationName, impossibleDayCsv)
      : undefined,
  })
  const { floor, floorFile } = await duckdbFloor(round)
  for (const file of [warehouseOf(name), floorFile]) {
    const landed = await withDuckdb(file, async (rowsOf) =>
      Number((await rowsOf('SELECT count(*) AS n FROM rentals'))[0]?.n),
    )
    if (landed !== ROWS) throw new Error(`DuckDB rentals in ${file}: ${landed} rows, expected ${ROWS}`)
  }
  const tables = { data: 'rentals', deadletters: `"${DEADLETTER_TABLE}"` }
  if (runs.source)
    await withDuckdb(warehouseOf(sourceName), (rowsOf) => checkLanded(rowsOf, tables, expected(true)))
  if (runs.destination)
    await withDuckdb(warehouseOf(destinationName), (rowsOf) => checkLanded(rowsOf, tables, expected(false)))
  return { ...runs, floor }
}

async function readCsv(round: number): Promise<ReadCsvRun> {
  const script = fileURLToPath(new URL('lib/read-csv.mjs', import.meta.url))
  const baseline = ensureOk(
    'read_csv',
    await measure(process.execPath, [script, path.join(dir, `baseline-${round}.duckdb`), csv]),
  )
  const { ms: statementMs, rows } = JSON.parse(baseline.stdout) as { ms: number; rows: number }
  if (rows !== ROWS) throw new Error(`DuckDB read_csv: ${rows} rows, expected ${ROWS}`)
  return { ...baseline, statementMs }
}

function duckdbRefusedRun(name: string, file: string): Promise<SkipprdRun> {
  return syncOnce(
    dir,
    {
      name,
      csv: file,
      sink: duckdbEntry,
      deadletterSink: duckdbEntry,
      rows: GOOD_ROWS,
      deadletters: REFUSED_ROWS,
    },
    PROFILE,
  )
}

/** The floor of (2) (lib/duckdb-floor.mjs), into a table made by the sink's own DDL: the table skipprd creates. */
async function duckdbFloor(round: number): Promise<{ floor: Measured; floorFile: string }> {
  const floorDir = path.join(dir, `duckdb-floor-${round}`)
  await mkdir(floorDir)
  const sink = new DuckdbSink(
    { path: 'floor.duckdb', schema: 'main' },
    { configDir: floorDir, dataDir: floorDir },
  )
  await sink.prepare(await inferredSchema(csv))
  await sink.close()
  const floorFile = path.join(floorDir, 'floor.duckdb')
  const floor = ensureOk(
    'the bare Node DuckDB load',
    await measure(process.execPath, [duckdbFloorScript, floorFile, 'rentals', csv]),
  )
  return { floor, floorFile }
}

/** Opens the DuckDB `file` (skipprd has exited) for `use`, and closes it after. */
async function withDuckdb<T>(file: string, use: (rowsOf: RowsOf) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(file)
  const connection = await instance.connect()
  try {
    return await use(async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJS())
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

const ms = (runs: readonly Measured[]) => median(runs.map((run) => run.ms))
const syncMs = (runs: readonly SkipprdRun[]) => median(runs.map((run) => run.syncMs))

interface Rounds {
  readonly skipprd: SkipprdRun
  readonly source: SkipprdRun | undefined
  readonly destination: SkipprdRun | undefined
}

/**
 * A row of (5) or (6) for one destination: the clean and the deadletter run's rates (good rows
 * landed over wall time) and CPU, and per round the deadletter run's rate over the clean run's;
 * beside it, CPU per good row over CPU per row. Undefined when the part did not run.
 */
function deadletterRow(label: string, rounds: readonly Rounds[], refusal: Refusal, target?: number) {
  const pairs = rounds.flatMap((r) => (r[refusal] ? [{ clean: r.skipprd, refused: r[refusal] }] : []))
  if (pairs.length === 0) return undefined
  const ratios = pairs.map(({ clean, refused }) => (GOOD_ROWS / refused.ms) * (clean.ms / ROWS))
  const cpuRatios = pairs.every(({ clean, refused }) => clean.cpuMs && refused.cpuMs !== undefined)
    ? pairs.map(({ clean, refused }) => refused.cpuMs! / GOOD_ROWS / (clean.cpuMs! / ROWS))
    : undefined
  const runs = (side: 'clean' | 'refused') => pairs.map((pair) => pair[side])
  return {
    met: target === undefined || median(ratios) >= target,
    cells: [
      label,
      `${formatRate(ROWS, ms(runs('clean')))}, ${cpuCell(runs('clean'))}`,
      `${formatRate(GOOD_ROWS, ms(runs('refused')))}, ${cpuCell(runs('refused'))}`,
      ratioCell(ratios),
      cpuRatios ? ratioCell(cpuRatios) : '?',
      target === undefined ? '—' : `≥ ${target}×`,
      target === undefined ? '' : verdict(median(ratios) >= target),
    ],
  }
}

/** What a loader of (7) left: the rows committed when it was killed, then after its rerun. */
interface CrashRun {
  readonly loader: string
  readonly killedAt: number
  readonly rows: number
}

interface Loader {
  readonly loader: string
  readonly table: string
  readonly command: string
  readonly args: readonly string[]
  readonly options: KillOptions
}

/**
 * (7): pgloader and then skipprd load the clean file into a table of one schema, each killed once
 * half the rows are committed and run again, the same command, to its end: pgloader into a table
 * made beforehand like the others of (1), skipprd from the data_dir its killed run left.
 */
async function crashAndRerun(): Promise<CrashRun[]> {
  const schema = await freshSchema('skippr_bench_e2e_crash')
  try {
    await prepareTables(schema, ['pgloader_rentals'])
    const pgloaderTable = `"${schema.name}"."pgloader_rentals"`
    const skipprd = await syncCommand(dir, {
      name: 'crash-skipprd',
      csv,
      sink: postgresEntry(schema.name),
      env: postgresEnv,
      rows: ROWS,
      deadletters: 0,
    })
    const loaders: Loader[] = [
      {
        loader: 'pgloader',
        table: pgloaderTable,
        command: PGLOADER,
        args: await pgloaderArgs(path.join(dir, 'crash-pgloader'), PG_URL, pgloaderTable, csv),
        options: {},
      },
      {
        loader: 'skipprd',
        table: `"${schema.name}"."rentals"`,
        command: process.execPath,
        args: skipprd.args,
        options: { cwd: skipprd.cwd, env: skipprd.env },
      },
    ]
    const runs: CrashRun[] = []
    for (const { loader, table, command, args, options } of loaders) {
      const killedAt = await killMidway(
        command,
        args,
        options,
        () => committedRows(schema.client, table),
        ROWS / 2,
      )
      // A kill after the last commit leaves the rerun nothing to get wrong.
      if (killedAt >= ROWS) throw new Error(`${loader} had committed all ${ROWS} rows when it was killed`)
      ensureOk(`${loader}'s rerun`, await measure(command, args, options))
      const { rows } = await schema.client.query<{ n: string; d: string }>(
        `SELECT count(*) AS n, count(DISTINCT rental_id) AS d FROM ${table}`,
      )
      const distinct = Number(rows[0]?.d)
      if (distinct !== ROWS)
        throw new Error(`${loader} after its rerun: ${distinct} distinct rental_ids, expected ${ROWS}`)
      runs.push({ loader, killedAt, rows: Number(rows[0]?.n) })
    }
    return runs
  } finally {
    await schema.drop()
  }
}

/** A row of (7): skipprd must leave exactly the file's rows; pgloader's duplicates are only shown. */
function crashRow({ loader, killedAt, rows }: CrashRun) {
  const exact = loader === 'skipprd'
  const n = (x: number) => x.toLocaleString('en')
  return {
    met: !exact || rows === ROWS,
    cells: [
      `(7) ${loader}, SIGKILL, rerun`,
      n(killedAt),
      n(rows),
      n(rows - ROWS),
      exact ? `exactly ${n(ROWS)}` : '—',
      exact ? verdict(rows === ROWS) : '',
    ],
  }
}

try {
  console.log(machineLine('skipprd e2e bench'))
  ensurePgloader()
  let started = performance.now()
  await writeBikehireFile(csv, { rows: ROWS, format: 'csv' })
  for (const [file, spoil] of [
    [notUtf8Csv, notUtf8],
    [impossibleDayCsv, impossibleDay],
  ] as const) {
    await mkdir(path.dirname(file))
    await writeSpoiledCopy(csv, file, SPOILING, spoil)
  }
  console.log(
    `generated ${ROWS.toLocaleString('en')} rows of bikehire CSV, and two copies with ${REFUSED_ROWS.toLocaleString('en')} ` +
      `of them spoiled, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  started = performance.now()
  if (!(ROUNDS >= 1)) throw new Error('SKIPPR_BENCH_E2E_ROUNDS must be at least 1')
  const pgRounds: PgRound[] = []
  const duckRounds: DuckRound[] = []
  for (let round = 0; round < ROUNDS; round++) {
    pgRounds.push(await postgres(round))
    duckRounds.push(await duckdb(round))
  }
  const start = await startup()
  const crashRuns = CRASH ? await crashAndRerun() : []

  const pgRatios = pgRounds.map((r) => r.psql.ms / r.skipprd.ms)
  const duckRatios = duckRounds.map((r) => r.readCsv.statementMs / r.skipprd.ms)
  const floorRatios = pgRounds.map((r) => r.psql.ms / r.floor.ms)
  const duckFloorRatios = duckRounds.map((r) => r.readCsv.statementMs / r.floor.ms)
  const pgRatio = median(pgRatios)
  const duckRatio = median(duckRatios)
  const pgSkipprd = pgRounds.map((r) => r.skipprd)
  const duckSkipprd = duckRounds.map((r) => r.skipprd)
  const peak = (runs: readonly Measured[]) => Math.max(...runs.map((run) => run.peakRss ?? 0)) / MB
  const rssMb = Math.max(peak(pgSkipprd), peak(duckSkipprd))
  const mb = (runs: readonly Measured[]) =>
    runs.some((run) => run.peakRss === undefined) ? '?' : `${peak(runs).toFixed(0)} MB`
  const statementMs = median(duckRounds.map((r) => r.readCsv.statementMs))
  const psqlRuns = pgRounds.map((r) => r.psql)
  const pgloaderRuns = pgRounds.map((r) => r.pgloader)
  const readCsvRuns = duckRounds.map((r) => r.readCsv)
  const rows: string[][] = [
    ['part', 'skipprd', 'raw limit', 'ratio', 'target', 'met'],
    [
      '(1) → PostgreSQL',
      `${formatRate(ROWS, ms(pgSkipprd))} (sync ${formatRate(ROWS, syncMs(pgSkipprd))}), ${cpuCell(pgSkipprd)}`,
      `psql \\copy ${formatRate(ROWS, ms(psqlRuns))}, psql's ${cpuCell(psqlRuns)}`,
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
      '    peer',
      `pgloader ${formatRate(ROWS, ms(pgloaderRuns))}, pgloader's ${cpuCell(pgloaderRuns)}`,
      'psql \\copy',
      ratioCell(pgRounds.map((r) => r.psql.ms / r.pgloader.ms)),
      '',
      '',
    ],
    [
      '(2) → DuckDB',
      `${formatRate(ROWS, ms(duckSkipprd))} (sync ${formatRate(ROWS, syncMs(duckSkipprd))}), ${cpuCell(duckSkipprd)}`,
      `read_csv ${formatRate(ROWS, statementMs)} (process ${formatRate(ROWS, ms(readCsvRuns))}, ${cpuCell(readCsvRuns)})`,
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
      `read_csv process ${mb(readCsvRuns)}`,
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
    `skipprd: spawn to exit ("sync": sync_complete's elapsed_ms), medians of ${ROUNDS} rounds; CPU is user + ` +
      "system of the process (psql's: its client only). Ratios are the median of the rounds' ratios (their range " +
      "in brackets), against psql's whole process and the read_csv statement alone (its whole process in " +
      'brackets); peak RSS is the highest of all runs. A floor is a Node process that only lands the file in ' +
      '10 MiB batches (no WAL, state or config), run after each pair: for PostgreSQL COPY transactions on two ' +
      "connections, for DuckDB the sink's grouped read_csv loads of load files. It shows how close a Node " +
      'process landing the same batches gets on this machine. The peer is pgloader with its defaults, ' +
      "timed as a whole process like psql, its CPU that of its process; it lands the file's rows too.",
  )
  const deadletterRows = [
    deadletterRow(
      '(5) → PostgreSQL, not UTF-8, set aside by the source',
      pgRounds,
      'source',
      TARGET.deadletters,
    ),
    deadletterRow(
      '(5) → DuckDB, not UTF-8, set aside by the source',
      duckRounds,
      'source',
      TARGET.deadletters,
    ),
    deadletterRow('(6) → PostgreSQL, refused by a CHECK constraint', pgRounds, 'destination'),
    deadletterRow('(6) → DuckDB, refused by its timestamp type', duckRounds, 'destination'),
  ].filter((row) => row !== undefined)
  if (deadletterRows.length > 0) {
    const header = ['part', 'clean run', `${REFUSED_ROWS.toLocaleString('en')} refused`, 'rows/s ratio']
    console.log(
      `\n${table([[...header, 'CPU/row ratio', 'target', 'met'], ...deadletterRows.map((r) => r.cells)])}\n`,
    )
    console.log(
      `Deadletter runs: the file with ${REFUSED_ROWS.toLocaleString('en')} rows spoiled, one every ` +
        `${SPOILING.every.toLocaleString('en')} from row ${SPOILING.first.toLocaleString('en')}, into the same ` +
        `destination as the clean run of (1) or (2) with a deadletter sink there too; their rate is the ` +
        `${GOOD_ROWS.toLocaleString('en')} good rows landed over wall time. A ratio is the deadletter run's rate ` +
        'over the clean run of the same round (CPU/row: CPU per good row over CPU per row). After each run the ' +
        `data table held exactly the good rows and ${DEADLETTER_TABLE} exactly the refused ones.`,
    )
  }
  const crashRows = crashRuns.map(crashRow)
  if (crashRows.length > 0) {
    const header = [
      'part',
      'rows committed when killed',
      'rows after the rerun',
      'duplicates',
      'target',
      'met',
    ]
    console.log(`\n${table([header, ...crashRows.map((r) => r.cells)])}\n`)
    console.log(
      `Crash and rerun: each loader, pgloader first, loads the clean file into PostgreSQL, is killed with ` +
        `SIGKILL once ${(ROWS / 2).toLocaleString('en')} rows are committed and is run again, the same ` +
        'command, to its end. Both tables then held every rental_id; duplicates are the rows beyond the file.',
    )
  }
  if (PROFILE) console.log("PROFILED: skipprd ran under --cpu-prof, so these ratios are not the benchmark's.")
  console.log(machineLine(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`))
  if (
    rows.slice(1).some((r) => r[5] === 'NO') ||
    deadletterRows.some((r) => !r.met) ||
    crashRows.some((r) => !r.met)
  )
    process.exitCode = 1
} finally {
  await rm(dir, { recursive: true, force: true })
}
