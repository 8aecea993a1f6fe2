/**
 * Running pipelines from a loaded config: resolves each pipeline's connectors and settings, then
 * runs it — one pipeline, or every pipeline in turn honouring sync_frequency_seconds (re-checking
 * every 10 s without --once). Shared by the CLI and the programmatic `Session`.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import {
  ConfigError,
  hasCode,
  type Meter,
  type SinkDefinition,
  type SourceDefinition,
} from '@skippr/connector-api'
import type { LeaseWatch } from '@skippr/state'
import { resolveWalSettings, type WalSettings } from '@skippr/wal'
import type { Logger } from 'pino'
import type { Env } from '../config/interpolate.js'
import type { ConfigFile } from '../config/load.js'
import {
  envSeconds,
  type PipelineSettings,
  pipelineNames,
  pipelineSettings,
  type RuntimeFlags,
} from '../config/settings.js'
import { checkDestinationsFit, checkEveryPipelineMode, type DestinationTier } from '../config/wal-storage.js'
import { type ResolvedConnector, resolveSink, resolveSource } from '../connectors.js'
import type { Redactor } from '../redact.js'
import { createChaos, noChaos } from './chaos.js'
import type { SyncListener } from './events.js'
import { type PipelineRunResult, runPipeline } from './pipeline-run.js'
import { checkStoreType } from './state-store.js'
import { checkWalStorage } from './wal-backend.js'

/** Every-pipeline mode without --once looks again this often. */
export const RECHECK_SECONDS = 10
const DEFAULT_RETRY_BUDGET_SECONDS = 60

export interface RunEnvironment {
  readonly file: ConfigFile
  readonly cwd: string
  readonly flags: RuntimeFlags
  readonly logger: Logger
  readonly redactor: Redactor
  readonly listener: SyncListener
  /** Where a pipeline's connectors publish their metrics, when the sync serves them. */
  readonly meter?: ((pipeline: string) => Meter) | undefined
  /** Aborted to stop cleanly; its reason names the signal. */
  readonly stop: AbortSignal
  /** Where chaos mode announces a kill (synchronously). */
  readonly announce: (line: string) => void
  /** Every-pipeline mode: a pipeline's run failed, and the next pipeline's starts. */
  readonly pipelineFailed?: (pipeline: string, error: unknown) => void
}

export interface ResolvedPipeline {
  readonly settings: PipelineSettings
  readonly wal: WalSettings
  readonly source: ResolvedConnector<SourceDefinition>
  readonly sink: ResolvedConnector<SinkDefinition> | undefined
  readonly deadletterSink: ResolvedConnector<SinkDefinition> | undefined
  readonly schemaSink: ResolvedConnector<SinkDefinition> | undefined
}

/** Settings and connectors of a pipeline; its secrets are registered for redaction. */
export async function resolvePipeline(
  environment: Pick<RunEnvironment, 'file' | 'cwd' | 'flags' | 'redactor'>,
  name: string,
  once: boolean,
): Promise<ResolvedPipeline> {
  const { file } = environment
  const settings = pipelineSettings(file, name, environment.flags, environment.cwd, once)
  checkStoreType(settings.store)
  const { sinkEntry, deadletterSinkEntry, schemaSinkEntry } = settings
  const [source, sink, deadletterSink, schemaSink] = await Promise.all([
    resolveSource(file, settings.sourceEntry),
    sinkEntry === undefined ? undefined : resolveSink(file, sinkEntry),
    deadletterSinkEntry === undefined
      ? undefined
      : resolveSink(file, deadletterSinkEntry, 'deadletter_sinks'),
    schemaSinkEntry === undefined ? undefined : resolveSink(file, schemaSinkEntry, 'schema_sinks'),
  ])
  environment.redactor.add([
    ...[source, sink, deadletterSink, schemaSink].flatMap((connector) => connector?.secrets ?? []),
    ...(settings.cluster ? [settings.cluster.secret] : []),
  ])
  checkDestinationsFit(settings.walStorage, [
    ...(sink ? [destinationTier('data_sinks', sink)] : []),
    ...(deadletterSink ? [destinationTier('deadletter_sinks', deadletterSink)] : []),
  ])
  checkWalStorage(settings)
  return { settings, wal: walSettings(file, settings), source, sink, deadletterSink, schemaSink }
}

function destinationTier(section: string, sink: ResolvedConnector<SinkDefinition>): DestinationTier {
  return { where: `${section}.${sink.entry}`, type: sink.type, guarantee: sink.definition.guarantee }
}

/** The WAL's settings resolver, with a bad skippr.yml value reported at its path in the file. */
function walSettings(file: ConfigFile, settings: PipelineSettings): WalSettings {
  try {
    return resolveWalSettings({
      yaml: {
        buffer_threshold_bytes: settings.bufferThresholdBytes,
        buffer_threshold_seconds: settings.bufferThresholdSeconds,
        wal_max_total_bytes: settings.walMaxTotalBytes,
      },
      env: file.env,
    })
  } catch (error) {
    const setting = (error as { setting?: unknown }).setting
    if (!hasCode(error, 'WAL_CONFIG_INVALID') || typeof setting !== 'string') throw error
    const where = /^(buffer_threshold_|wal_max_total_bytes$)/.test(setting)
      ? `${file.label}: pipelines.${settings.name}.${setting}: `
      : ''
    throw new ConfigError(`${where}${(error as Error).message}`, { cause: error })
  }
}

export function syncPipeline(
  environment: RunEnvironment,
  pipeline: ResolvedPipeline,
  options: { once: boolean; honourFrequency: boolean; leaseWatch?: LeaseWatch; stopEndsCleanly?: boolean },
): Promise<PipelineRunResult> {
  const { file, logger } = environment
  const env = file.env
  const chaos = pipeline.settings.chaos
    ? createChaos(env, (line) => {
        logger.warn({ pipeline: pipeline.settings.name }, line)
        environment.announce(line)
      })
    : noChaos
  return runPipeline({
    ...pipeline,
    configDir: file.dir,
    env,
    once: options.once,
    honourFrequency: options.honourFrequency,
    logger,
    listener: environment.listener,
    meter: environment.meter,
    stop: environment.stop,
    chaos,
    retryBudgetMs: envSeconds(env, 'SKIPPR_RETRY_BUDGET_SECONDS', DEFAULT_RETRY_BUDGET_SECONDS) * 1000,
    leaseWaitMs: optionalMs(env, 'SKIPPR_LEASE_WAIT_SECONDS'),
    leaseTtlMs: optionalMs(env, 'SKIPPR_LEASE_TTL_SECONDS'),
    ...(options.leaseWatch && { leaseWatch: options.leaseWatch }),
    ...(options.stopEndsCleanly && { stopEndsCleanly: true }),
  })
}

/** A duration from the environment in ms, or undefined to keep the state store's default. */
function optionalMs(env: Env, name: string): number | undefined {
  return env[name] ? envSeconds(env, name, 0) * 1000 : undefined
}

/**
 * Syncs every pipeline in the file, one after another. A failing pipeline does not stop the
 * others; resolves with how many failed. Without --once it keeps going until `stop` aborts.
 * A pipeline another sync holds the lease of is skipped, not waited for, so several processes
 * sharing a state store divide the pipelines between them; one that has seen a lease unchanged
 * for its TTL over its rounds (its holder died) takes it over.
 */
export async function syncEveryPipeline(environment: RunEnvironment, once: boolean): Promise<number> {
  const names = pipelineNames(environment.file)
  const pipelines = []
  for (const name of names) {
    const pipeline = await resolvePipeline(environment, name, once)
    checkEveryPipelineMode(pipeline.settings.walStorage)
    pipelines.push(pipeline)
  }
  let failures = 0
  const recheckMs = envSeconds(environment.file.env, 'SKIPPR_RECHECK_SECONDS', RECHECK_SECONDS) * 1000
  const watches = new Map(names.map((name): [string, LeaseWatch] => [name, {}]))
  for (;;) {
    for (const pipeline of pipelines) {
      if (environment.stop.aborted) return failures
      const leaseWatch = watches.get(pipeline.settings.name)
      try {
        await syncPipeline(environment, pipeline, {
          once: true,
          honourFrequency: true,
          // Without --once the process is long-running: a stop is a clean stop, in a run or between.
          stopEndsCleanly: !once,
          ...(leaseWatch && { leaseWatch }),
        })
      } catch (error) {
        failures++
        environment.logger.error({ pipeline: pipeline.settings.name, err: error }, 'pipeline sync failed')
        environment.pipelineFailed?.(pipeline.settings.name, error)
      }
    }
    if (once || environment.stop.aborted) return failures
    await sleep(recheckMs, undefined, { signal: environment.stop }).catch(() => {})
  }
}
