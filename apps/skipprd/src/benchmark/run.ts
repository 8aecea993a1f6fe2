/**
 * `skipprd benchmark`'s rounds, as tools/bench/e2e.ts runs them: the bikehire CSV is written once,
 * then each round loads it twice into the operator's destination, by skipprd (pipeline.ts) and by the
 * destination's own bulk load (the sink's `bulkLoad`), in turn first, each timed (wall and this
 * process's CPU) around the load alone. Every load lands in a table named for the benchmark and the
 * round, `skippr_benchmark_<random>_<round>` and `…_bulk`; both are dropped, and the round's pipeline
 * forgotten in the sink's ledger, as soon as the round ends, whether it succeeded or not.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { BulkLoad, NamespaceSchema } from '@skippr/connector-api'
import { writeBikehireFile } from '@skippr/source-sample'
import { connectorLogger } from '../logging.js'
import { BenchmarkStoppedError } from './errors.js'
import {
  type BenchmarkEnvironment,
  type BenchmarkRun,
  discoveredSchema,
  prepareRun,
  requireSinkEntry,
} from './pipeline.js'

export const BENCHMARK_PREFIX = 'skippr_benchmark'
/** The native load's table is the round's own name with this after it. */
export const BULK_SUFFIX = '_bulk'

export interface BenchmarkOptions {
  /** The `data_sinks` entry to benchmark. */
  readonly sinkEntry: string
  readonly rows: number
  readonly rounds: number
  /** Told once the sink is resolved, with its connector type, before the first load. */
  readonly onStart?: (sinkType: string) => void
  /** Told of each round as it ends. */
  readonly onRound?: (round: Round, index: number) => void
}

/** One load, timed: the rows the destination reports, wall and CPU (user + system) milliseconds. */
export interface Load {
  readonly rows: number
  readonly wallMs: number
  readonly cpuMs: number
}

export interface Round {
  readonly skipprd: Load
  /** Undefined when the sink has no bulk load. */
  readonly bulkLoad: Load | undefined
}

export interface BenchmarkResult {
  readonly sinkEntry: string
  /** The sink's connector type, e.g. `Duckdb`. */
  readonly sinkType: string
  /** The rows in the file: what every load must report. */
  readonly rows: number
  readonly rounds: readonly Round[]
  /** Tables the benchmark could not drop (a sink without a bulk load cannot drop any). */
  readonly left: readonly string[]
}

/** The sink's bulk load, and the schema its tables take: skipprd's, as the File source finds it. */
interface Native {
  readonly load: BulkLoad
  readonly schema: NamespaceSchema
}

export async function runBenchmark(
  environment: BenchmarkEnvironment,
  options: BenchmarkOptions,
): Promise<BenchmarkResult> {
  requireSinkEntry(environment.file, options.sinkEntry)
  const id = `${BENCHMARK_PREFIX}_${randomBytes(4).toString('hex')}`
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-benchmark-'))
  let bulk: Native | null | undefined
  let sinkType = ''
  const rounds: Round[] = []
  const left: string[] = []
  try {
    const csvFile = path.join(dir, 'bikehire.csv')
    await writeBikehireFile(csvFile, { rows: options.rows, format: 'csv' })
    for (let index = 0; index < options.rounds; index++) {
      throwIfStopped(environment.stop)
      const name = `${id}_${index + 1}`
      const dataDir = path.join(dir, name)
      await mkdir(dataDir)
      try {
        const run = await prepareRun(environment, options.sinkEntry, { name, csvFile, dataDir })
        if (bulk === undefined) {
          sinkType = run.resolved.sink?.type ?? ''
          options.onStart?.(sinkType)
          bulk = await openBulkLoad(run, environment)
        }
        const round = await runRound(environment, run, bulk, { name, csvFile, skipprdFirst: index % 2 === 0 })
        rounds.push(round)
        options.onRound?.(round, index)
      } finally {
        if (bulk) left.push(...(await dropRound(environment, bulk.load, name)))
        else if (bulk === null) left.push(name)
        await rm(dataDir, { recursive: true, force: true })
      }
    }
    return { sinkEntry: options.sinkEntry, sinkType, rows: options.rows, rounds, left }
  } finally {
    await bulk?.load.close()
    await rm(dir, { recursive: true, force: true })
  }
}

/** The sink's bulk load, or null when the sink has none. */
async function openBulkLoad(run: BenchmarkRun, environment: BenchmarkEnvironment): Promise<Native | null> {
  const { sink, settings } = run.resolved
  if (!sink?.definition.bulkLoad) return null
  const schema = await discoveredSchema(run.resolved, environment)
  const load = await sink.definition.bulkLoad(sink.config, {
    configDir: environment.file.dir,
    dataDir: settings.dataDir,
    pipeline: settings.name,
    logger: connectorLogger(environment.logger),
  })
  return { load, schema }
}

async function runRound(
  environment: BenchmarkEnvironment,
  run: BenchmarkRun,
  bulk: Native | null,
  round: { name: string; csvFile: string; skipprdFirst: boolean },
): Promise<Round> {
  const skipprd = () => measure(() => syncUnlessStopped(environment.stop, run))
  const native =
    bulk && (() => measure(() => bulk.load.load(`${round.name}${BULK_SUFFIX}`, bulk.schema, round.csvFile)))
  if (!native) return { skipprd: await skipprd(), bulkLoad: undefined }
  if (round.skipprdFirst) {
    const first = await skipprd()
    throwIfStopped(environment.stop)
    return { skipprd: first, bulkLoad: await native() }
  }
  const first = await native()
  throwIfStopped(environment.stop)
  return { skipprd: await skipprd(), bulkLoad: first }
}

async function measure(work: () => Promise<number>): Promise<Load> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const rows = await work()
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { rows, wallMs, cpuMs: (used.user + used.system) / 1000 }
}

/** A stop while skipprd syncs ends the run with the runner's own error: the benchmark's replaces it. */
async function syncUnlessStopped(stop: AbortSignal, run: BenchmarkRun): Promise<number> {
  try {
    return await run.sync()
  } catch (error) {
    throwIfStopped(stop)
    throw error
  }
}

function throwIfStopped(stop: AbortSignal): void {
  if (stop.aborted) throw new BenchmarkStoppedError(String(stop.reason ?? 'a signal'))
}

/** Drops the round's two tables and forgets its pipeline; returns the tables it could not drop. */
async function dropRound(environment: BenchmarkEnvironment, bulk: BulkLoad, name: string): Promise<string[]> {
  const failed: string[] = []
  for (const table of [name, `${name}${BULK_SUFFIX}`])
    await bulk.drop(table).catch((error: unknown) => {
      environment.logger.warn({ err: error, table }, 'benchmark: dropping a table failed')
      failed.push(table)
    })
  await bulk.forgetPipeline(name).catch((error: unknown) => {
    environment.logger.warn({ err: error, pipeline: name }, "benchmark: clearing the sink's ledger failed")
  })
  return failed
}
