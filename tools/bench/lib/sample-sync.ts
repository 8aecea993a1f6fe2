/**
 * One `skipprd sync --pipeline bikehire --once` of the Sample source's bikehire rows into DuckDB:
 * the BUILT CLI in a child process of its own (lib/skipprd.ts), from a new working directory with a
 * skippr.yml of its own and its DATA_DIR in it (a new host), timed from spawn to exit
 * (lib/process.ts). The run counts only if skipprd exits 0 and its `sync_complete` reports every
 * row written. Where the WAL and the state go is the caller's environment (`WAL_STORAGE`, …).
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { stringify } from 'yaml'
import { ensureOk, measure } from './process.js'
import { defaultsEnv, skipprdCli } from './skipprd.js'
import type { SkipprdRun } from './sync-once.js'

/** The pipeline's name: its state records are under it. */
export const SAMPLE_PIPELINE = 'bikehire'

export interface SampleSync {
  /** The working directory's name under the bench's directory. */
  readonly name: string
  readonly rows: number
  /** Rows per chunk the source hands over (the source's default: 10,000). */
  readonly batchRows?: number
  /** The pipeline's `buffer_threshold_bytes` (skipprd's default: 10 MiB). */
  readonly bufferThresholdBytes?: number
  readonly env?: Record<string, string>
}

interface SyncComplete {
  readonly total_rows: number
  readonly elapsed_ms: number
}

const cli = skipprdCli()

/** Runs the sync of `setup` in `dir/<name>`, which it leaves for the caller to remove. */
export async function sampleSyncOnce(dir: string, setup: SampleSync): Promise<SkipprdRun> {
  const workDir = path.join(dir, setup.name)
  await mkdir(workDir)
  const config = path.join(workDir, 'skippr.yml')
  await writeFile(config, stringify(skipprYml(setup)))
  const args = [cli, 'sync', '--pipeline', SAMPLE_PIPELINE, '--once', '--output', 'json', '--config', config]
  const env = defaultsEnv({ DATA_DIR: path.join(workDir, 'data'), ...setup.env })
  const run = ensureOk(
    `skipprd sync (${setup.name})`,
    await measure(process.execPath, args, { cwd: workDir, env }),
  )
  const complete = run.stdout
    .split('\n')
    .filter((line) => line.includes('"sync_complete"'))
    .map((line) => JSON.parse(line) as SyncComplete)[0]
  if (complete?.total_rows !== setup.rows)
    throw new Error(`skipprd (${setup.name}) wrote ${complete?.total_rows} rows, expected ${setup.rows}`)
  return { ...run, syncMs: complete.elapsed_ms }
}

function skipprYml(setup: SampleSync): object {
  const sample = {
    dataset: 'bikehire',
    rows: setup.rows,
    ...(setup.batchRows && { batch_rows: setup.batchRows }),
  }
  const pipeline = {
    data_source: 'data_sources.sample',
    data_sink: 'data_sinks.warehouse',
    ...(setup.bufferThresholdBytes && { buffer_threshold_bytes: setup.bufferThresholdBytes }),
  }
  return {
    data_sources: { sample: { Sample: sample } },
    data_sinks: { warehouse: { Duckdb: { path: './warehouse.duckdb' } } },
    pipelines: { [SAMPLE_PIPELINE]: pipeline },
  }
}
