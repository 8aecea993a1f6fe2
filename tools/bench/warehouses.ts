/**
 * `skipprd sync --once` into the exactly-once warehouse sinks, each beside the SDK's own bare load
 * of the same files against the same server, in the same run:
 *
 *  (1) a bikehire CSV (1,000,000 rows by default) through the File source (WAL on, defaults) into
 *      Snowflake, vs a bare Node process loading the very files the sink staged through
 *      snowflake-sdk: a PUT and a COPY INTO per file, autocommit (lib/snowflake-load.mjs);
 *  (2) the same into BigQuery, vs a bare Node process loading the very bytes the sink uploaded
 *      through @google-cloud/bigquery: `table.load` per file (lib/bigquery-load.mjs).
 *
 * Target for both: ≥ 0.8× the bare load's rows/s. Beside it, the round trips per landed batch by
 * kind, counted at the server (the fakes' `requestCounts`): targets are at most a PUT and one
 * transaction for Snowflake, one upload and one poll for BigQuery.
 *
 * Servers: the protocol-level fakes of @skippr/test-servers (rows in DuckDB), served by this
 * process; no real Snowflake or BigQuery is reachable here. Their CPU time is this process's during
 * a run ("fake CPU"): the bench does nothing else meanwhile. What the files are: before the rounds,
 * one skipprd run into each (not counted) lands the rows while the fake keeps a copy of every file
 * loaded (`captureLoads`), which the bare loads then load. Every run is checked afterwards through
 * the sink's own `count` and `duplicates` against the fake: exactly the rows, no rental_id twice.
 *
 * skipprd is the BUILT CLI run as a child process, timed from spawn to exit (lib/sync-once.ts), the
 * bare loads the same way, CPU time beside wall. SKIPPR_BENCH_WH_ROUNDS rounds, in each the two
 * sides of one warehouse back to back, starting one further along each round (lib/rounds.ts), each
 * side into a schema or dataset of its own; the median of the rounds' ratios counts, with the range.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench warehouses
 * Env:  SKIPPR_BENCH_WH_ROWS   rows in the file (default 1,000,000)
 *       SKIPPR_BENCH_WH_ROUNDS rounds (default 5)
 *       SKIPPR_BENCH_PROFILE   1: run skipprd under `node --cpu-prof` and print its top functions
 *                              (slows it down: the ratios are then not the benchmark's)
 *       SKIPPR_BENCH_DIR       where the temporary data goes (default: the OS temp dir)
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { silentLogger } from '@skippr/connector-api'
import { BigquerySink } from '@skippr/sink-bigquery'
import { SnowflakeSink } from '@skippr/sink-snowflake'
import { writeBikehireFile } from '@skippr/source-sample'
import {
  type FakeBigquery,
  type FakeSnowflake,
  startFakeBigquery,
  startFakeSnowflake,
} from '@skippr/test-servers'
import { ensureOk, type Measured, measure } from './lib/process.js'
import { cpuCell, formatRate, machineLine, median, ratioCell, table, verdict } from './lib/report.js'
import { type Counts, perBatch, withRoundTrips } from './lib/round-trips.js'
import { inRotation } from './lib/rounds.js'
import { inferredSchema, type SkipprdRun, syncOnce } from './lib/sync-once.js'

const ROWS = Number(process.env.SKIPPR_BENCH_WH_ROWS ?? 1_000_000)
const ROUNDS = Number(process.env.SKIPPR_BENCH_WH_ROUNDS ?? 5)
const PROFILE = process.env.SKIPPR_BENCH_PROFILE === '1'
const TARGET = 0.8
const NAMESPACE = 'rentals'
const KEY = 'rental_id'
/** Where the uncounted first run lands (upper case: Snowflake upper-cases a bare name). */
const CAPTURE = 'CAPTURE'
const SECRET_VARIABLE = 'SKIPPR_BENCH_WH_SECRET'
const bareScript = (name: string) => fileURLToPath(new URL(`lib/${name}-load.mjs`, import.meta.url))

const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-wh-'))
const csv = path.join(dir, `${NAMESPACE}.csv`)

/** A run with the round trips it cost and the CPU time the fakes (this process) spent meanwhile. */
type Counted<T extends Measured = Measured> = T & { readonly roundTrips: Counts; readonly fakeCpuMs: number }

interface Round {
  readonly skipprd: Counted<SkipprdRun>
  readonly bare: Counted
  /** Batches skipprd landed (rows of its ledger), files the bare load loaded. */
  readonly batches: number
  readonly files: number
}

/** One warehouse: how to point skipprd's sink, the sink in this process and the bare load at a place. */
interface Warehouse {
  readonly name: string
  readonly fake: FakeSnowflake | FakeBigquery
  /** Makes the schema or dataset `place` if the sink does not, and for the bare load a table like `like`'s. */
  makePlace(place: string, like?: string): Promise<void>
  sinkEntry(place: string): object
  sink(place: string): SnowflakeSink | BigquerySink
  bareTarget(place: string): object
  batches(place: string): Promise<number>
  /** The captured files in load order. */
  readonly files: string[]
}

function snowflakeWarehouse(fake: FakeSnowflake, columns: readonly string[]): Warehouse {
  const config = (schema: string) => ({
    account: fake.account,
    username: fake.username,
    warehouse: fake.warehouse,
    database: fake.database,
    schema,
    access_url: fake.accessUrl,
  })
  const qualified = (schema: string) => `"${fake.database}"."${schema}"."${NAMESPACE}"`
  return {
    name: 'Snowflake',
    fake,
    async makePlace(schema, like) {
      await fake.sql(`CREATE SCHEMA "${fake.database}"."${schema}"`)
      if (like)
        await fake.sql(`CREATE TABLE ${qualified(schema)} AS SELECT * FROM ${qualified(like)} LIMIT 0`)
    },
    sinkEntry: (schema) => ({ Snowflake: { ...config(schema), password: `\${${SECRET_VARIABLE}}` } }),
    sink: (schema) => new SnowflakeSink({ ...config(schema), password: fake.password }, silentLogger),
    bareTarget: (schema) => ({
      ...config(schema),
      accessUrl: fake.accessUrl,
      password: fake.password,
      table: NAMESPACE,
      columns,
    }),
    batches: async (schema) => (await fake.rows(schema, '_skippr_batches')).length,
    files: [],
  }
}

function bigqueryWarehouse(fake: FakeBigquery): Warehouse {
  const config = (dataset: string) => ({ project: fake.project, dataset, api_endpoint: fake.endpoint })
  return {
    name: 'BigQuery',
    fake,
    async makePlace(dataset, like) {
      // The sink makes its own dataset; the bare load's table is made like the captured one.
      if (!like) return
      await fake.sql(`CREATE SCHEMA "${dataset}"`)
      await fake.sql(
        `CREATE TABLE "${dataset}"."${NAMESPACE}" AS SELECT * FROM "${like}"."${NAMESPACE}" LIMIT 0`,
      )
    },
    sinkEntry: (dataset) => ({ Bigquery: { ...config(dataset), access_token: `\${${SECRET_VARIABLE}}` } }),
    sink: (dataset) => new BigquerySink({ ...config(dataset), access_token: fake.token }, silentLogger),
    bareTarget: (dataset) => ({
      endpoint: fake.endpoint,
      project: fake.project,
      token: fake.token,
      dataset,
      table: NAMESPACE,
    }),
    batches: async (dataset) => (await fake.rows(dataset, '_skippr_batches')).length,
    files: [],
  }
}

const secretOf = (w: Warehouse) => ('password' in w.fake ? w.fake.password : w.fake.token)

/** Exactly the file's rows in `place`, each rental_id once, read through the sink's own queries. */
async function expectRows(w: Warehouse, place: string): Promise<void> {
  const sink = w.sink(place)
  try {
    const [count, duplicates] = [await sink.count(NAMESPACE), await sink.duplicates(NAMESPACE, [KEY])]
    if (count !== ROWS || duplicates !== 0)
      throw new Error(
        `${w.name} ${place}.${NAMESPACE}: ${count} rows, ${duplicates} duplicates; expected ${ROWS}, 0`,
      )
  } finally {
    await sink.close()
  }
}

/** Runs `task` against `w`'s fake, counting its round trips and the fake's CPU time. */
async function counted<T extends Measured>(w: Warehouse, task: () => Promise<T>): Promise<Counted<T>> {
  const cpu = process.cpuUsage()
  const run = await withRoundTrips(w.fake, task)
  const spent = process.cpuUsage(cpu)
  return { ...run, fakeCpuMs: (spent.user + spent.system) / 1000 }
}

const sync = (w: Warehouse, name: string, place: string, profile = false) =>
  syncOnce(
    dir,
    {
      name,
      csv,
      sink: w.sinkEntry(place),
      env: { [SECRET_VARIABLE]: secretOf(w) },
      rows: ROWS,
      deadletters: 0,
    },
    profile,
  )

/** The uncounted first run, whose loaded files the fake keeps for the bare load. */
async function capture(w: Warehouse): Promise<number> {
  const files = path.join(dir, `${w.name}-files`)
  await mkdir(files)
  await w.makePlace(CAPTURE)
  w.fake.captureLoads(files)
  try {
    await sync(w, `${w.name}-capture`, CAPTURE)
  } finally {
    w.fake.captureLoads(undefined)
  }
  await expectRows(w, CAPTURE)
  w.files.push(...(await readdir(files)).sort().map((name) => path.join(files, name)))
  return w.batches(CAPTURE)
}

async function bareLoad(w: Warehouse, place: string): Promise<Measured> {
  const env = { ...process.env, SKIPPR_BENCH_WH_TARGET: JSON.stringify(w.bareTarget(place)) }
  const script = bareScript(w.name.toLowerCase())
  return ensureOk(`the bare ${w.name} load`, await measure(process.execPath, [script, ...w.files], { env }))
}

async function round(w: Warehouse, n: number): Promise<Round> {
  const [mine, bare] = [`R${n}_SKIPPRD`, `R${n}_BARE`]
  await w.makePlace(mine)
  await w.makePlace(bare, CAPTURE)
  const runs = await inRotation(n, {
    skipprd: async () => {
      const run = await counted(w, () => sync(w, `${w.name}-${n}`, mine, PROFILE))
      await expectRows(w, mine)
      return run
    },
    bare: async () => {
      const run = await counted(w, () => bareLoad(w, bare))
      await expectRows(w, bare)
      return run
    },
  })
  return { ...runs, batches: await w.batches(mine), files: w.files.length }
}

const ms = (runs: readonly Measured[]) => median(runs.map((run) => run.ms))
const fakeCpu = (runs: readonly Counted[]) => cpuCell(runs.map((run) => ({ cpuMs: run.fakeCpuMs })))

function report(results: readonly { w: Warehouse; rounds: readonly Round[] }[]): boolean {
  const rows: string[][] = [['warehouse', 'skipprd', 'bare SDK load', 'ratio', 'target', 'met']]
  const trips: string[][] = [['warehouse', 'side', 'round trips (last round)']]
  let met = true
  for (const { w, rounds } of results) {
    const ratios = rounds.map((r) => r.bare.ms / r.skipprd.ms)
    const [mine, bare] = [rounds.map((r) => r.skipprd), rounds.map((r) => r.bare)]
    const syncMs = median(mine.map((run) => run.syncMs))
    const ok = median(ratios) >= TARGET
    met &&= ok
    rows.push([
      w.name,
      `${formatRate(ROWS, ms(mine))} (sync ${formatRate(ROWS, syncMs)}), ${cpuCell(mine)}, fake ${fakeCpu(mine)}`,
      `${formatRate(ROWS, ms(bare))}, ${cpuCell(bare)}, fake ${fakeCpu(bare)}`,
      ratioCell(ratios),
      `≥ ${TARGET}×`,
      verdict(ok),
    ])
    const last = rounds.at(-1) as Round
    trips.push([w.name, `skipprd (${last.batches} batches)`, perBatch(last.skipprd.roundTrips, last.batches)])
    trips.push(['', `bare (${last.files} files)`, perBatch(last.bare.roundTrips, last.files)])
  }
  console.log(`\n${table(rows)}\n\n${table(trips)}\n`)
  console.log(
    `${ROWS.toLocaleString('en')} rows; skipprd: spawn to exit ("sync": sync_complete's elapsed_ms), bare: ` +
      `spawn to exit, medians of ${ROUNDS} rounds; CPU is user + system of the process, "fake" that of ` +
      "the bench process serving the fake meanwhile. Ratios are the median of the rounds' ratios (their " +
      'range in brackets). Round trips are requests counted at the fake, per batch (file) where a kind ' +
      'occurs at least once per batch, else per run.',
  )
  if (PROFILE) console.log("PROFILED: skipprd ran under --cpu-prof, so these ratios are not the benchmark's.")
  return met
}

let snowflake: FakeSnowflake | undefined
let bigquery: FakeBigquery | undefined
try {
  console.log(machineLine('skipprd warehouses bench'))
  if (!(ROUNDS >= 1)) throw new Error('SKIPPR_BENCH_WH_ROUNDS must be at least 1')
  let started = performance.now()
  await writeBikehireFile(csv, { rows: ROWS, format: 'csv' })
  console.log(
    `generated ${ROWS.toLocaleString('en')} rows of bikehire CSV in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  started = performance.now()
  const columns = (await inferredSchema(csv)).fields.map((f) => f.name)
  snowflake = await startFakeSnowflake()
  bigquery = await startFakeBigquery()
  const warehouses = [snowflakeWarehouse(snowflake, columns), bigqueryWarehouse(bigquery)]
  for (const w of warehouses) {
    const batches = await capture(w)
    console.log(`${w.name}: captured ${w.files.length} files of ${batches} batches`)
  }
  console.log(`captured in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const results = warehouses.map((w) => ({ w, rounds: [] as Round[] }))
  for (let n = 0; n < ROUNDS; n++) for (const result of results) result.rounds.push(await round(result.w, n))
  const met = report(results)
  console.log(machineLine(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`))
  if (!met) process.exitCode = 1
} finally {
  await snowflake?.stop()
  await bigquery?.stop()
  await rm(dir, { recursive: true, force: true })
}
