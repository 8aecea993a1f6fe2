/** One round trip: a skippr.yml from the source to the sink, a real `skipprd sync --once`, the comparison. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type RunOutcome, runSync, skipprdCli } from '@skippr/chaos'
import { type CompareOptions, compareRows } from './compare.js'
import type { SinkTarget } from './sinks.js'
import type { SourceFixture } from './sources.js'

export const PIPELINE = 'p'
// SKIPPR_FIDELITY_CLI runs another build of skipprd (an older commit's, to see the suite fail on its bugs).

/**
 * The suite's environment minus anything that would steer skipprd elsewhere. NODE_PATH goes too:
 * vitest points it at the workspace's package store, where skipprd would find connector packages
 * other than its own.
 */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(SKIPPR_|DATA_DIR$|PIPELINE_NAME$|WAL_|BUFFER_THRESHOLD_|NODE_PATH$)/.test(name)) env[name] = value
  }
  return Object.assign(env, extra)
}

/** One `skipprd sync --once` of a pipeline from `source` into `sink`, configured in `dir`. */
export async function syncOnce(
  dir: string,
  source: Pick<SourceFixture, 'entry' | 'env'>,
  sink: SinkTarget,
): Promise<RunOutcome> {
  // JSON is YAML: the config needs no YAML writer.
  const config = {
    data_sources: { source: source.entry },
    data_sinks: { sink: sink.entry },
    pipelines: { [PIPELINE]: { data_source: 'data_sources.source', data_sink: 'data_sinks.sink' } },
  }
  const configPath = path.join(dir, 'skippr.yml')
  await writeFile(configPath, JSON.stringify(config, null, 2))
  return runSync({
    cliPath: process.env.SKIPPR_FIDELITY_CLI ?? skipprdCli(),
    configPath,
    pipeline: PIPELINE,
    env: childEnv({ ...source.env, ...sink.env }),
    logFile: path.join(dir, 'cli.log'),
    timeoutMs: 90_000,
  })
}

/** Syncs `source` into `sink` once and returns every difference; empty when all landed exactly. */
export async function syncAndCompare(
  dir: string,
  source: SourceFixture,
  sink: SinkTarget,
  options: CompareOptions = {},
): Promise<string[]> {
  const outcome = await syncOnce(dir, source, sink)
  if (outcome.kind !== 'completed')
    return [`sync did not complete: ${outcome.kind === 'failed' ? outcome.reason : outcome.point}`]
  const problems = compareRows(source, await sink.read(), options)
  const reported = outcome.rowsWritten
  if (reported !== source.rows.length)
    problems.push(`sync reported ${reported} rows written; the source holds ${source.rows.length}`)
  return problems
}

/** A working directory for one run, removed after it unless SKIPPR_FIDELITY_KEEP is set. */
export async function withRunDir<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-fidelity-'))
  try {
    return await use(dir)
  } finally {
    if (!process.env.SKIPPR_FIDELITY_KEEP) await rm(dir, { recursive: true, force: true })
  }
}
