/**
 * The buffering and WAL settings of one pipeline, resolved YAML → environment → default (a pipeline's
 * `buffer_threshold_*` and `wal_max_total_bytes` keys in skippr.yml win over the process-wide
 * variables). The other `WAL_*` file settings are environment-only, as the operator docs say.
 * `WAL_STORAGE` is not read here: it picks the backend type, which is the caller's to choose (skipprd
 * parses it), so it is parsed in one place.
 */
import { WalConfigError } from './errors.js'

/** The `WAL_STORAGE` values, as settings and messages name the storages. */
export const WAL_STORAGES = ['disk', 's3', 'clustered'] as const
export type WalStorage = (typeof WAL_STORAGES)[number]

const MiB = 1024 * 1024
export const DEFAULT_BUFFER_THRESHOLD_BYTES = 10_485_760
export const DEFAULT_BUFFER_THRESHOLD_SECONDS = 60
export const DEFAULT_MAX_DELAY_SECONDS = 60
/** WAL_MAX_TOTAL_BYTES: the WAL files of a pipeline stop growing here and its source waits. */
export const DEFAULT_MAX_TOTAL_BYTES = 10 * 1024 * MiB
/**
 * The default WAL file size is the byte threshold plus this share of it, clamped to the range below. A
 * batch is flushed once it reaches the threshold, so it runs over by up to one source chunk: with room
 * for that, a batch is one frame in one file. A file of exactly the threshold split nearly every batch
 * over two files (a rotation per commit) and two frames (joined by a copy when read back).
 */
const DEFAULT_FILE_HEADROOM = 0.25
/** The range the default WAL file size is clamped to. */
export const MIN_DEFAULT_BYTES_PER_FILE = 4 * MiB
export const MAX_DEFAULT_BYTES_PER_FILE = 64 * MiB
/** An explicit WAL_BYTES_PER_FILE may go lower (tests use small files), but not below this. */
export const MIN_BYTES_PER_FILE = 64 * 1024
export const MAX_BYTES_PER_FILE = 1024 * MiB
/** A buffered batch must fit in one Uint8Array. */
const MAX_BUFFER_THRESHOLD_BYTES = 4096 * MiB - 1

export interface WalSettings {
  readonly bufferThresholdBytes: number
  readonly bufferThresholdSeconds: number
  readonly bytesPerFile: number
  readonly maxDelaySeconds: number
  /** WAL_MAX_TOTAL_BYTES: the cap on the pipeline's WAL files (at least two of them). */
  readonly maxTotalBytes: number
}

export interface WalSettingsInput {
  /** The pipeline's keys from skippr.yml, as parsed (numbers, or strings of digits). */
  readonly yaml?: {
    readonly buffer_threshold_bytes?: unknown
    readonly buffer_threshold_seconds?: unknown
    readonly wal_max_total_bytes?: unknown
  }
  /** Defaults to process.env. An empty variable counts as unset. */
  readonly env?: Env
}

export function resolveWalSettings(input: WalSettingsInput = {}): WalSettings {
  const env = input.env ?? process.env
  const yaml = input.yaml ?? {}
  const bufferThresholdBytes = wholeBytes(
    pick(yaml.buffer_threshold_bytes, 'buffer_threshold_bytes', env, 'BUFFER_THRESHOLD_BYTES'),
    DEFAULT_BUFFER_THRESHOLD_BYTES,
    1,
    MAX_BUFFER_THRESHOLD_BYTES,
  )
  const bytesPerFile = wholeBytes(
    fromEnv(env, 'WAL_BYTES_PER_FILE'),
    Math.min(
      Math.max(Math.ceil(bufferThresholdBytes * (1 + DEFAULT_FILE_HEADROOM)), MIN_DEFAULT_BYTES_PER_FILE),
      MAX_DEFAULT_BYTES_PER_FILE,
    ),
    MIN_BYTES_PER_FILE,
    MAX_BYTES_PER_FILE,
  )
  return {
    bufferThresholdBytes,
    bufferThresholdSeconds: seconds(
      pick(yaml.buffer_threshold_seconds, 'buffer_threshold_seconds', env, 'BUFFER_THRESHOLD_SECONDS'),
      DEFAULT_BUFFER_THRESHOLD_SECONDS,
    ),
    bytesPerFile,
    maxDelaySeconds: seconds(fromEnv(env, 'WAL_MAX_DELAY_SECONDS'), DEFAULT_MAX_DELAY_SECONDS),
    // The slot needs room for the file being written and the next one.
    maxTotalBytes: wholeBytes(
      pick(yaml.wal_max_total_bytes, 'wal_max_total_bytes', env, 'WAL_MAX_TOTAL_BYTES'),
      DEFAULT_MAX_TOTAL_BYTES,
      2 * bytesPerFile,
      Number.MAX_SAFE_INTEGER,
      ' (at least two WAL files of WAL_BYTES_PER_FILE)',
    ),
  }
}

interface Raw {
  readonly setting: string
  readonly value: unknown
}

type Env = Readonly<Record<string, string | undefined>>

function pick(yamlValue: unknown, yamlKey: string, env: Env, variable: string): Raw | undefined {
  if (yamlValue !== undefined && yamlValue !== null) return { setting: yamlKey, value: yamlValue }
  return fromEnv(env, variable)
}

function fromEnv(env: Env, variable: string): Raw | undefined {
  const value = env[variable]
  return value === undefined || value === '' ? undefined : { setting: variable, value }
}

function wholeBytes(raw: Raw | undefined, fallback: number, min: number, max: number, why = ''): number {
  if (raw === undefined) return fallback
  const n = toNumber(raw.value)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new WalConfigError(
      raw.setting,
      `${raw.setting} must be a whole number of bytes from ${min}${why} to ${max}, got '${String(raw.value)}'`,
    )
  }
  return n
}

function seconds(raw: Raw | undefined, fallback: number): number {
  if (raw === undefined) return fallback
  const n = toNumber(raw.value)
  if (!Number.isFinite(n) || n <= 0) {
    throw new WalConfigError(
      raw.setting,
      `${raw.setting} must be a positive number of seconds, got '${String(raw.value)}'`,
    )
  }
  return n
}

function toNumber(value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value === 'string' && /^\s*[0-9]+(\.[0-9]+)?\s*$/.test(value)) return Number(value)
  return Number.NaN
}
