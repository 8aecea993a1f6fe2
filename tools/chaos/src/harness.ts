/**
 * The chaos loop: in a temp working dir, syncs a pipeline (the Sample source, or with `refused`
 * a CSV file with bad rows for the File source and a deadletter sink) into the chosen sink with
 * chaos mode on, restarting after every SIGKILL until a run completes, then checks the
 * destination holds every source row exactly once (chaos-source.ts says where; into an
 * at-least-once destination, once the copies its retries landed are removed by their part key;
 * in an object store, also that every object is one the key layout names: object-audit.ts).
 *
 * A finite source cannot be killed once it has landed everything, so when a run completes before
 * `minKills` kills the source grows by `rows` more rows (the Sample source then emits only the new
 * ones, as an append-only table would; the file gets them appended) and chaos goes on. After
 * `maxRuns` runs with chaos on, one run without chaos finishes the job; its exit is not a kill.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { stringify } from 'yaml'
import { type ChaosSource, chaosSource } from './chaos-source.js'
import { type Destination, duckdbDestination, postgresDestination, type SinkKind } from './destination.js'
import { amqpDestination } from './destination-amqp.js'
import { azureBlobDestination } from './destination-azure-blob.js'
import { clickhouseDestination } from './destination-clickhouse.js'
import { s3Destination } from './destination-s3.js'
import { sftpDestination } from './destination-sftp.js'
import { bigqueryDestination, snowflakeDestination } from './destination-warehouse.js'
import { type HostLoss, startHostLoss } from './host-loss.js'
import { type RunOutcome, runSync, skipprdCli } from './skipprd.js'
import type { RefusedCounts } from './verify-refused.js'

export interface ChaosOptions {
  readonly sink: SinkKind
  /** Source rows at the start, and the step it grows by. */
  readonly rows: number
  readonly minKills: number
  /** Runs with chaos on; then one run without. */
  readonly maxRuns: number
  /** Chance of a kill at each chaos point visited (SKIPPR_CHAOS_PROBABILITY). */
  readonly probability: number
  /** Run i uses chaos seed `${chaosSeed}:${i}`: the same seed repeats the same kill rolls. */
  readonly chaosSeed: string
  /** The Sample source's seed: which rows it generates. */
  readonly dataSeed: number
  /** BUFFER_THRESHOLD_BYTES: small values make many batches, so kills land between commit and land. */
  readonly bufferBytes: number
  /** The Sample source's rows per chunk. */
  readonly batchRows: number
  /**
   * The share of bad rows in [0, 1): above 0 the source is a CSV file for the File source, with
   * that share of rows the source or the destination refuses, and a deadletter sink.
   */
  readonly refused: number
  /** The File source's `chunk_bytes`, with `refused`. */
  readonly chunkBytes: number
  /** SKIPPR_LEASE_TTL_SECONDS: the longest a restart can wait for the killed run's writer lease. */
  readonly leaseTtlSeconds: number
  readonly runTimeoutSeconds: number
  readonly pgUrl: string
  /** The broker of the `amqp` sink (an exchange and queue are made for the run). */
  readonly amqpUrl: string
  /** Every run on a new host: the WAL in S3, the state in DynamoDB, the data dir deleted (host-loss.ts). */
  readonly hostLoss: boolean
  /** Keep the working dir and the PostgreSQL schema, e.g. to look at a failure. */
  readonly keep: boolean
  readonly onRun?: (run: RunRecord) => void
}

export interface RunRecord {
  readonly run: number
  readonly chaos: boolean
  readonly sourceRows: number
  readonly outcome: RunOutcome
}

export interface ChaosReport {
  readonly pass: boolean
  readonly problems: readonly string[]
  readonly kills: number
  readonly killsByPoint: Readonly<Record<string, number>>
  readonly runs: number
  /** Runs that ended neither completed nor chaos-killed (each is a "retry later"). */
  readonly failedRuns: number
  /** Whether a run without chaos had to finish. */
  readonly finishedWithoutChaos: boolean
  /** Source rows at the end (a multiple of `rows`). */
  readonly sourceRows: number
  readonly elapsedMs: number
  readonly workDir: string
  readonly destination: string
  /** With `hostLoss`: where the WAL and the state were. */
  readonly hosts?: string
  /** With `refused`: where the file's rows are, once the last run completed. */
  readonly refused?: RefusedCounts
  /** Into an at-least-once destination: rows landed again by retries, removed by their part key. */
  readonly extraCopies?: number
  /** Into an object store: what the audit of its objects looked at. */
  readonly objects?: string
}

const PIPELINE = 'bikehire'
const DATA_DIR = 'data'
/** A healthy restart after a kill succeeds; this many failures in a row means something is broken. */
const MAX_CONSECUTIVE_FAILURES = 3

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = performance.now()
  const cliPath = skipprdCli()
  const workDir = await mkdtemp(path.join(os.tmpdir(), `skippr-chaos-${options.sink}-`))
  const destination = await openDestination(options, workDir)
  const hosts = options.hostLoss ? await startHostLoss() : undefined
  const source = chaosSource(options, workDir, PIPELINE)
  const configPath = path.join(workDir, 'skippr.yml')
  const problems: string[] = []
  const killsByPoint: Record<string, number> = {}
  let kills = 0
  let runs = 0
  let failedRuns = 0
  let consecutiveFailures = 0
  let sourceRows = options.rows
  let completed = false
  let refused: RefusedCounts | undefined
  let extraCopies: number | undefined
  let objects: string | undefined
  try {
    await source.prepare(destination)
    await source.grow(0, sourceRows)
    await writeFile(configPath, skipprYml(options, source, destination, sourceRows, hosts))
    while (!completed) {
      const chaos = runs < options.maxRuns
      const outcome = await runSync({
        cliPath,
        configPath,
        pipeline: PIPELINE,
        env: {
          ...childEnv(options, destination, chaos ? `${options.chaosSeed}:${runs}` : undefined),
          ...hosts?.env,
        },
        logFile: path.join(workDir, 'runs.log'),
        timeoutMs: options.runTimeoutSeconds * 1000,
      })
      runs++
      await hosts?.forget(path.join(workDir, DATA_DIR))
      options.onRun?.({ run: runs, chaos, sourceRows, outcome })
      if (outcome.kind === 'killed') {
        kills++
        killsByPoint[outcome.point] = (killsByPoint[outcome.point] ?? 0) + 1
        consecutiveFailures = 0
      } else if (outcome.kind === 'failed') {
        failedRuns++
        if (++consecutiveFailures >= MAX_CONSECUTIVE_FAILURES || outcome.reason.includes('hung')) {
          problems.push(`run ${runs} failed (${consecutiveFailures} in a row): ${outcome.reason}`)
          break
        }
      } else if (chaos && kills < options.minKills) {
        consecutiveFailures = 0
        await source.grow(sourceRows, sourceRows + options.rows)
        sourceRows += options.rows
        await writeFile(configPath, skipprYml(options, source, destination, sourceRows, hosts))
      } else {
        completed = true
      }
    }
    if (completed) {
      const verdict = await source.verify(destination, sourceRows)
      problems.push(...verdict.problems)
      refused = verdict.refused
      extraCopies = verdict.extraCopies
      const audit = await destination.audit?.()
      problems.push(...(audit?.problems ?? []))
      objects = audit?.summary
    }
    if (kills < options.minKills)
      problems.push(
        `only ${kills} kills in ${options.maxRuns} chaos runs, ${options.minKills} wanted: raise --max-runs or --probability`,
      )
  } finally {
    await destination.dispose({ keep: options.keep })
    await hosts?.stop()
    if (problems.length === 0 && !options.keep) await rm(workDir, { recursive: true, force: true })
  }
  return {
    pass: problems.length === 0,
    problems,
    kills,
    killsByPoint,
    runs,
    failedRuns,
    finishedWithoutChaos: runs > options.maxRuns,
    sourceRows,
    elapsedMs: performance.now() - started,
    workDir,
    destination: destination.label,
    ...(hosts && { hosts: hosts.label }),
    ...(refused && { refused }),
    ...(extraCopies !== undefined && { extraCopies }),
    ...(objects !== undefined && { objects }),
  }
}

function openDestination(options: ChaosOptions, workDir: string): Promise<Destination> | Destination {
  switch (options.sink) {
    case 'duckdb':
      return duckdbDestination(workDir)
    case 'postgres':
      return postgresDestination(options.pgUrl)
    case 'clickhouse':
      return clickhouseDestination(workDir, false)
    case 'clickhouse-replicated':
      return clickhouseDestination(workDir, true)
    case 'amqp':
      return amqpDestination(workDir, options.amqpUrl)
    case 's3':
      return s3Destination(workDir, PIPELINE)
    case 'azure-blob':
      return azureBlobDestination(workDir, PIPELINE)
    case 'sftp':
      return sftpDestination(workDir, PIPELINE)
    case 'snowflake':
      return snowflakeDestination(workDir)
    case 'bigquery':
      return bigqueryDestination(workDir)
  }
}

function skipprYml(
  options: ChaosOptions,
  source: ChaosSource,
  destination: Destination,
  rows: number,
  hosts: HostLoss | undefined,
): string {
  // The deadletter sink is the data sink's database (and schema): the harder case, both tables
  // and their landed-batch records side by side (connector-api's deadletter.ts).
  return stringify({
    ...(hosts && { skippr: hosts.skipprSection }),
    data_sources: { source: source.entry(rows) },
    data_sinks: { warehouse: destination.sink },
    ...(source.deadletters && { deadletter_sinks: { rejects: destination.sink } }),
    pipelines: {
      [PIPELINE]: {
        data_source: 'data_sources.source',
        data_sink: 'data_sinks.warehouse',
        ...(source.deadletters && { deadletter_sink: 'deadletter_sinks.rejects' }),
        data_dir: `./${DATA_DIR}`,
        buffer_threshold_bytes: options.bufferBytes,
      },
    },
  })
}

/** The harness's environment minus anything that would steer skipprd elsewhere, plus the chaos knobs. */
function childEnv(
  options: ChaosOptions,
  destination: Destination,
  chaosSeed: string | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(SKIPPR_|DATA_DIR$|PIPELINE_NAME$|WAL_|BUFFER_THRESHOLD_)/.test(name)) env[name] = value
  }
  Object.assign(env, destination.env, { SKIPPR_LEASE_TTL_SECONDS: String(options.leaseTtlSeconds) })
  if (chaosSeed !== undefined) {
    Object.assign(env, {
      SKIPPR_CHAOS_MODE: 'yes',
      SKIPPR_CHAOS_PROBABILITY: String(options.probability),
      SKIPPR_CHAOS_SEED: chaosSeed,
    })
  }
  return env
}
