/**
 * `skipprd sync --once` into DuckDB by input size (issue 28): does the sync's memory stay bounded
 * whatever the file holds, and does its speed hold up beside DuckDB's own load of the same file?
 *
 * For each size a bikehire CSV of that many rows goes through the File source (WAL on, default
 * settings) into a DuckDB file, beside DuckDB's own `CREATE TABLE t AS SELECT * FROM read_csv('file')`
 * (lib/read-csv.mjs, timed around the one statement, its whole process shown beside it). Targets, at
 * every size: skipprd's peak RSS ≤ 300 MB (the highest of its rounds), and rows/s ≥ 0.5× read_csv's.
 *
 * skipprd is the BUILT CLI run as a child process and timed from spawn to exit (lib/sync-once.ts),
 * with its CPU time (user + system) and peak RSS (lib/process.ts). Every run must land exactly the
 * file's rows: sync_complete says so, and the table is counted after.
 *
 * The two run in rounds, each round starting with the other one (lib/rounds.ts); a ratio is taken
 * within each round and the median counts, with the range beside it. A big file takes minutes a round,
 * so the bigger sizes run fewer rounds by default. Each size's file and databases are deleted once
 * its rounds are done, each round's databases after the round: 27M rows are a 2.15 GB file.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench duckdb-sizes
 * Env:  SKIPPR_BENCH_SIZES   rows per file, comma separated (default 1000000,8000000,27000000)
 *       SKIPPR_BENCH_ROUNDS  rounds at every size (default 5 up to 1M rows, 3 up to 8M, 2 above)
 *       SKIPPR_BENCH_DIR     where the temporary data goes (default: the OS temp dir)
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { writeBikehireFile } from '@skippr/source-sample'
import { ensureOk, type Measured, measure } from './lib/process.js'
import { cpuCell, formatRate, machineLine, median, ratioCell, table, verdict } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { type SkipprdRun, syncOnce } from './lib/sync-once.js'

const SIZES = (process.env.SKIPPR_BENCH_SIZES ?? '1000000,8000000,27000000').split(',').map(Number)
const MB = 1024 * 1024
const TARGET = { rssMb: 300, ratio: 0.5 }
const readCsvScript = fileURLToPath(new URL('lib/read-csv.mjs', import.meta.url))
const duckdbEntry = { Duckdb: { path: './warehouse.duckdb' } }

if (SIZES.some((rows) => !(Number.isInteger(rows) && rows > 0)))
  throw new Error(
    `SKIPPR_BENCH_SIZES: positive row counts, comma separated, not ${process.env.SKIPPR_BENCH_SIZES}`,
  )

function roundsFor(rows: number): number {
  const asked = process.env.SKIPPR_BENCH_ROUNDS
  if (asked !== undefined) {
    const rounds = Number(asked)
    if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error('SKIPPR_BENCH_ROUNDS must be at least 1')
    return rounds
  }
  return rows <= 1_000_000 ? 5 : rows <= 8_000_000 ? 3 : 2
}

type ReadCsvRun = Measured & { statementMs: number }

interface Round {
  readonly readCsv: ReadCsvRun
  readonly skipprd: SkipprdRun
}

interface SizeResult {
  readonly rows: number
  readonly fileBytes: number
  readonly rounds: readonly Round[]
}

async function readCsv(dir: string, csv: string, rows: number): Promise<ReadCsvRun> {
  const run = ensureOk(
    'read_csv',
    await measure(process.execPath, [readCsvScript, path.join(dir, 'baseline.duckdb'), csv]),
  )
  const { ms: statementMs, rows: loaded } = JSON.parse(run.stdout) as { ms: number; rows: number }
  if (loaded !== rows) throw new Error(`DuckDB read_csv: ${loaded} rows, expected ${rows}`)
  return { ...run, statementMs }
}

/** The rows skipprd's table holds, read once skipprd has exited. */
async function landedRows(file: string): Promise<number> {
  const instance = await DuckDBInstance.create(file)
  const connection = await instance.connect()
  try {
    return Number((await connection.runAndReadAll('SELECT count(*) FROM rentals')).getRows()[0]?.[0])
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

async function size(dir: string, rows: number): Promise<SizeResult> {
  const sizeDir = path.join(dir, String(rows))
  await mkdir(sizeDir)
  // Named rentals.csv, in a directory of its own: a file's name is its namespace.
  const csv = path.join(sizeDir, 'input', 'rentals.csv')
  await mkdir(path.dirname(csv))
  let started = performance.now()
  await writeBikehireFile(csv, { rows, format: 'csv' })
  const fileBytes = (await stat(csv)).size
  console.log(
    `generated ${rows.toLocaleString('en')} rows of bikehire CSV (${(fileBytes / MB).toFixed(0)} MB) in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  const rounds: Round[] = []
  for (let round = 0; round < roundsFor(rows); round++) {
    started = performance.now()
    const roundDir = path.join(sizeDir, `round-${round}`)
    await mkdir(roundDir)
    const name = 'skipprd'
    const result = await inRotation(round, {
      readCsv: () => readCsv(roundDir, csv, rows),
      skipprd: () => syncOnce(roundDir, { name, csv, sink: duckdbEntry, rows, deadletters: 0 }),
    })
    const landed = await landedRows(path.join(roundDir, name, 'warehouse.duckdb'))
    if (landed !== rows) throw new Error(`skipprd landed ${landed} rows in DuckDB, expected ${rows}`)
    await rm(roundDir, { recursive: true, force: true })
    rounds.push(result)
    console.log(
      `  round ${round + 1}: skipprd ${(result.skipprd.ms / 1000).toFixed(1)} s, ` +
        `${((result.skipprd.peakRss ?? 0) / MB).toFixed(0)} MB peak; read_csv ` +
        `${(result.readCsv.statementMs / 1000).toFixed(1)} s (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    )
  }
  await rm(sizeDir, { recursive: true, force: true })
  return { rows, fileBytes, rounds }
}

const ms = (runs: readonly Measured[]) => median(runs.map((run) => run.ms))
const peakMb = (runs: readonly Measured[]) => Math.max(...runs.map((run) => (run.peakRss ?? Infinity) / MB))
const medianPeakMb = (runs: readonly Measured[]) => median(runs.map((run) => (run.peakRss ?? Infinity) / MB))

function rowOf({ rows, fileBytes, rounds }: SizeResult) {
  const skipprd = rounds.map((r) => r.skipprd)
  const readCsvRuns = rounds.map((r) => r.readCsv)
  const ratios = rounds.map((r) => r.readCsv.statementMs / r.skipprd.ms)
  const peak = peakMb(skipprd)
  const met = peak <= TARGET.rssMb && median(ratios) >= TARGET.ratio
  return {
    met,
    cells: [
      `${rows.toLocaleString('en')} rows, ${(fileBytes / MB).toFixed(0)} MB`,
      String(rounds.length),
      `${formatRate(rows, ms(skipprd))}, ${(ms(skipprd) / 1000).toFixed(1)} s, ${cpuCell(skipprd)}`,
      `${peak.toFixed(0)} MB (median ${medianPeakMb(skipprd).toFixed(0)})`,
      `${formatRate(rows, median(readCsvRuns.map((r) => r.statementMs)))}; process ` +
        `${(ms(readCsvRuns) / 1000).toFixed(1)} s, ${cpuCell(readCsvRuns)}, ${peakMb(readCsvRuns).toFixed(0)} MB`,
      ratioCell(ratios),
      verdict(met),
    ],
  }
}

const dir = await mkdtemp(
  path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-duckdb-sizes-'),
)
try {
  console.log(machineLine('skipprd DuckDB sync by input size'))
  const started = performance.now()
  const results: SizeResult[] = []
  for (const rows of SIZES) results.push(await size(dir, rows))
  const rows = results.map(rowOf)
  const header = [
    'input',
    'rounds',
    'skipprd sync --once',
    'skipprd peak RSS',
    'read_csv',
    'rows/s ratio',
    'met',
  ]
  console.log(`\n${table([header, ...rows.map((r) => r.cells)])}\n`)
  console.log(
    `Targets at every size: skipprd's peak RSS ≤ ${TARGET.rssMb} MB in every round, and rows/s ≥ ` +
      `${TARGET.ratio}× read_csv's (the statement alone, the median of the rounds' ratios). Wall and CPU ` +
      'are medians; every skipprd run landed exactly the rows of its file.',
  )
  console.log(machineLine(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`))
  if (rows.some((r) => !r.met)) process.exitCode = 1
} finally {
  await rm(dir, { recursive: true, force: true })
}
