/**
 * One `skipprd sync --pipeline e2e --once` of a CSV file through the File source, as the e2e bench
 * runs it: the BUILT CLI in a child process of its own, from a new working directory with a
 * skippr.yml of its own, timed from spawn to exit. The run counts only if skipprd exits 0 and its
 * `sync_complete` reports exactly the rows and deadletters the caller expects.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { type NamespaceSchema, silentLogger } from '@skippr/connector-api'
import { FileSource } from '@skippr/source-file'
import { stringify } from 'yaml'
import { topSelfTimes } from './cpu-profile.js'
import { ensureOk, type Measured, measure } from './process.js'
import { defaultsEnv, skipprdCli } from './skipprd.js'

/** The pipeline's name; its deadletters land as `_dl_e2e` (connector-api's deadletter.ts). */
export const PIPELINE = 'e2e'

export interface SkipprdRun extends Measured {
  /** `elapsed_ms` of sync_complete: the sync without process start and exit. */
  readonly syncMs: number
}

export interface SyncSetup {
  /** The working directory's name under the bench's directory. */
  readonly name: string
  readonly csv: string
  /** The data sink's entry, e.g. `{ Duckdb: { path: './warehouse.duckdb' } }`. */
  readonly sink: object
  /** The deadletter sink's entry, if the pipeline has one. */
  readonly deadletterSink?: object
  readonly env?: Record<string, string>
  /** What sync_complete must report: rows landed in the data sink, and rows set aside. */
  readonly rows: number
  readonly deadletters: number
}

interface SyncComplete {
  readonly total_rows: number
  readonly elapsed_ms: number
  readonly deadletter_rows?: number
  readonly discarded_rows?: number
}

const cli = skipprdCli()

/** How to run the sync of a setup: `node <args>` from `cwd` with `env`, as often as wanted. */
export interface SyncCommand {
  readonly args: readonly string[]
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  /** Where `node --cpu-prof` leaves its profile, when profiled. */
  readonly profileDir: string
}

/**
 * Makes `dir/<name>` with the skippr.yml of `setup`, and returns the command that syncs it; with
 * `profile`, under `node --cpu-prof`. A second run of it resumes from the first's data_dir.
 */
export async function syncCommand(dir: string, setup: SyncSetup, profile = false): Promise<SyncCommand> {
  const workDir = path.join(dir, setup.name)
  await mkdir(workDir)
  const config = path.join(workDir, 'skippr.yml')
  await writeFile(config, stringify(skipprYml(workDir, setup)))
  const profileDir = path.join(workDir, 'cpu-profile')
  const node = profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []
  const args = [
    ...node,
    cli,
    'sync',
    '--pipeline',
    PIPELINE,
    '--once',
    '--output',
    'json',
    '--config',
    config,
  ]
  return { args, cwd: workDir, env: defaultsEnv(setup.env), profileDir }
}

/** Runs the sync of `setup` in `dir/<name>`; with `profile`, under `node --cpu-prof`, and prints its top functions. */
export async function syncOnce(dir: string, setup: SyncSetup, profile = false): Promise<SkipprdRun> {
  const { args, profileDir, ...options } = await syncCommand(dir, setup, profile)
  const run = ensureOk(`skipprd sync (${setup.name})`, await measure(process.execPath, args, options))
  const complete = run.stdout
    .split('\n')
    .filter((line) => line.includes('"sync_complete"'))
    .map((line) => JSON.parse(line) as SyncComplete)[0]
  const deadletters = complete?.deadletter_rows ?? 0
  if (complete?.total_rows !== setup.rows || deadletters !== setup.deadletters || complete.discarded_rows)
    throw new Error(
      `skipprd (${setup.name}) wrote ${complete?.total_rows} rows and set aside ${deadletters} ` +
        `(${complete?.discarded_rows ?? 0} discarded); expected ${setup.rows} and ${setup.deadletters}`,
    )
  if (profile) await printProfile(setup.name, profileDir)
  return { ...run, syncMs: complete.elapsed_ms }
}

function skipprYml(workDir: string, setup: SyncSetup): object {
  const pipeline = {
    data_source: 'data_sources.rentals',
    data_sink: 'data_sinks.warehouse',
    ...(setup.deadletterSink && { deadletter_sink: 'deadletter_sinks.rejects' }),
    data_dir: './data',
  }
  return {
    data_sources: { rentals: { File: { path: path.relative(workDir, setup.csv), format: 'csv' } } },
    data_sinks: { warehouse: setup.sink },
    ...(setup.deadletterSink && { deadletter_sinks: { rejects: setup.deadletterSink } }),
    pipelines: { [PIPELINE]: pipeline },
  }
}

async function printProfile(name: string, profileDir: string): Promise<void> {
  console.log(`cpu profile of skipprd (${name}), self time:`)
  for (const { name: fn, ms, share } of await topSelfTimes(profileDir, 20))
    console.log(`  ${(share * 100).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(6)} ms  ${fn}`)
}

/** The schema the File source infers for `csv`: what skipprd's sinks make their tables from. */
export async function inferredSchema(csv: string): Promise<NamespaceSchema> {
  const dir = path.dirname(csv)
  const [inferred] = await new FileSource(
    { path: csv, format: 'csv' },
    { configDir: dir, dataDir: dir, pipeline: PIPELINE, logger: silentLogger },
  ).discover()
  if (!inferred) throw new Error(`the File source found no schema in ${csv}`)
  return inferred
}
