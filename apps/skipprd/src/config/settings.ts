/**
 * What one pipeline runs with, from skippr.yml, the environment and the command-line flags. The
 * precedence the README's "Flags" and "Environment" tables state: a pipeline's own YAML keys win,
 * then flags, then environment variables, then defaults (`--store-type` applies when
 * `skippr.store.type` is unset).
 */
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import type { WalStorage } from '@skippr/wal'
import { PipelineNotFoundError } from '../errors.js'
import { type ClusterSettings, clusterSettings } from './cluster.js'
import { blockingFile, requireDirectory } from './directories.js'
import type { Env } from './interpolate.js'
import type { ConfigFile } from './load.js'
import { walStorage } from './wal-storage.js'

export const DEFAULT_SYNC_FREQUENCY_SECONDS = 900

/** Flags that override the environment (`--wal-storage`, `--store-type`, …). */
export interface RuntimeFlags {
  readonly walStorage?: string | undefined
  readonly walS3Bucket?: string | undefined
  readonly storeType?: string | undefined
  readonly storeName?: string | undefined
  /** `--create-store`: create the state store's table when it is missing. */
  readonly createStore?: boolean | undefined
}

/** Which state store, as asked for; `state-store.ts` says whether it is known and opens it. */
export interface StoreSettings {
  readonly type: string
  readonly name: string | undefined
  readonly endpoint: string | undefined
  readonly create: boolean
  /** Where the config file is: a store's package is looked for there first, as connectors are. */
  readonly packageDir: string
}

export interface PipelineSettings {
  readonly name: string
  readonly sourceEntry: string
  readonly sinkEntry: string | undefined
  readonly deadletterSinkEntry: string | undefined
  /** The data sink's `schema_sink:` entry name; optional, so that settings built without it have none. */
  readonly schemaSinkEntry?: string | undefined
  /** Absolute. */
  readonly dataDir: string
  readonly syncFrequencySeconds: number
  readonly chaos: boolean
  /** From skippr.yml; the WAL's settings resolver applies the environment and defaults. */
  readonly bufferThresholdBytes: number | undefined
  readonly bufferThresholdSeconds: number | undefined
  /** `wal_max_total_bytes`; optional, so that settings built without it keep the WAL's default. */
  readonly walMaxTotalBytes?: number | undefined
  /** As asked for: `walBackend` (wal-storage.ts) says whether this build has it. */
  readonly walStorage: WalStorage
  /** `skippr.wal_s3_bucket`, `--wal-s3-bucket`, `SKIPPR_WAL_S3_BUCKET`, else `SKIPPR_S3_BUCKET`. */
  readonly walS3Bucket?: string | undefined
  /** `skippr.wal_s3_endpoint`: an S3-compatible server, else the SDK's (`AWS_ENDPOINT_URL_S3`). */
  readonly walS3Endpoint?: string | undefined
  /** `WAL_STORAGE=clustered`: this node and its peers (SKIPPR_CLUSTER_*). */
  readonly cluster?: ClusterSettings | undefined
  readonly store: StoreSettings
  readonly workspace: string
}

export function pipelineNames(file: ConfigFile): string[] {
  return Object.keys(file.data.pipelines ?? {})
}

export function pipelineSettings(
  file: ConfigFile,
  name: string,
  flags: RuntimeFlags,
  cwd: string,
  once: boolean,
): PipelineSettings {
  const pipeline = file.data.pipelines?.[name]
  if (!pipeline) throw new PipelineNotFoundError(name, file.label, pipelineNames(file))
  const env = file.env
  const [, sourceEntry = ''] = pipeline.data_source.split('.')
  const sinkEntry = pipeline.data_sink?.split('.')[1]
  const storage = walStorage(flags.walStorage, env, once)
  return {
    name,
    sourceEntry,
    sinkEntry,
    deadletterSinkEntry: pipeline.deadletter_sink?.split('.')[1],
    schemaSinkEntry:
      sinkEntry === undefined ? undefined : file.data.schema_sink_of?.[sinkEntry]?.split('.')[1],
    dataDir: dataDir(file, name, pipeline.data_dir, cwd),
    syncFrequencySeconds: pipeline.sync_frequency_seconds ?? DEFAULT_SYNC_FREQUENCY_SECONDS,
    chaos: pipeline.chaos_mode === true || isYes(env.SKIPPR_CHAOS_MODE),
    bufferThresholdBytes: pipeline.buffer_threshold_bytes,
    bufferThresholdSeconds: pipeline.buffer_threshold_seconds,
    walMaxTotalBytes: pipeline.wal_max_total_bytes,
    walStorage: storage,
    walS3Bucket:
      file.data.skippr?.wal_s3_bucket ??
      flags.walS3Bucket ??
      (env.SKIPPR_WAL_S3_BUCKET || undefined) ??
      (env.SKIPPR_S3_BUCKET || undefined),
    walS3Endpoint: file.data.skippr?.wal_s3_endpoint,
    cluster: storage === 'clustered' ? clusterSettings(env) : undefined,
    store: {
      type: file.data.skippr?.store?.type ?? flags.storeType ?? env.SKIPPR_STORE_TYPE ?? 'sled',
      name: file.data.skippr?.store?.name ?? flags.storeName ?? env.SKIPPR_STORE_NAME,
      endpoint: file.data.skippr?.store?.endpoint,
      create: file.data.skippr?.store?.create ?? flags.createStore ?? false,
      packageDir: file.dir,
    },
    workspace: file.data.skippr?.workspace ?? 'default',
  }
}

/** The pipeline's data_dir (relative to the config file), else DATA_DIR, else `data` beside the file. */
function dataDir(file: ConfigFile, name: string, own: string | undefined, cwd: string): string {
  if (!own) return defaultDataDir(file, cwd)
  const absolute = path.resolve(file.dir, own)
  requireDirectory(absolute, own, `${file.label}: pipelines.${name}.data_dir`, 'data_dir')
  return absolute
}

/** DATA_DIR (relative to the working directory; loading the file checked it), else `data` beside the file. */
function defaultDataDir(file: ConfigFile, cwd: string): string {
  const fromEnv = file.env.DATA_DIR
  return fromEnv ? path.resolve(cwd, fromEnv) : path.join(file.dir, 'data')
}

/**
 * Where logs go: DATA_DIR if set, otherwise the working directory. A DATA_DIR that cannot be a
 * directory is refused when the config loads; that refusal is logged in the working directory.
 */
export function logDirectory(env: Env, cwd: string): string {
  const fromEnv = env.DATA_DIR ? path.resolve(cwd, env.DATA_DIR) : undefined
  return fromEnv && blockingFile(fromEnv) === undefined ? fromEnv : cwd
}

export function isYes(value: string | undefined): boolean {
  return ['yes', 'true', '1', 'on'].includes((value ?? '').trim().toLowerCase())
}

/** A non-negative number from the environment, or the default; anything else is a config error. */
export function envSeconds(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0)
    throw new ConfigError(`${name}=${raw}: expected a number of seconds ≥ 0`)
  return value
}
