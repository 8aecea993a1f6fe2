/**
 * `WAL_STORAGE` / `--wal-storage`: where the WAL lives, which destinations that place accepts, and
 * which places this build has. This is the one place that parses it: @skippr/wal does not read the
 * variable, it takes the backend type walBackend() (runner/wal-backend.ts) picks. Clustered storage keeps a second copy of
 * the WAL on a peer, so a batch can be landed by either node; only destinations whose retries cannot
 * duplicate rows are safe behind it (the README's "Guarantee tiers").
 */
import type { Guarantee } from '@skippr/connector-api'
import type { WalStorage } from '@skippr/wal'
import { WalStorageInvalidError, WalStorageRefusesSinkError, WalStorageUnavailableError } from '../errors.js'
import type { Env } from './interpolate.js'

// By value: importing @skippr/wal here would load it for every command, `--help` included.
const WAL_STORAGES: readonly WalStorage[] = ['disk', 's3', 'clustered']

/** The tiers a clustered WAL accepts: a landing repeated by another node leaves the rows once. */
const CLUSTERED_TIERS: readonly Guarantee[] = ['exactly-once', 'overwrite-on-retry']

/** The storage asked for by the flag, else the environment, else `disk`. */
export function walStorage(flag: string | undefined, env: Env, once: boolean): WalStorage {
  const value = (flag ?? env.WAL_STORAGE ?? 'disk').trim().toLowerCase()
  if (!(WAL_STORAGES as readonly string[]).includes(value)) throw new WalStorageInvalidError(value)
  if (value === 'clustered' && once)
    throw new WalStorageUnavailableError(
      'WAL_STORAGE=clustered does not support sync --once: drop --once, or use --wal-storage disk',
    )
  return value as WalStorage
}

/**
 * Refuses every-pipeline mode (`sync` without --pipeline): its rounds are runs of --once, and a
 * clustered node serves one pipeline's DATA_DIR on its SKIPPR_CLUSTER_LISTEN for the whole sync.
 */
export function checkEveryPipelineMode(storage: WalStorage): void {
  if (storage === 'clustered')
    throw new WalStorageUnavailableError(
      'WAL_STORAGE=clustered runs one pipeline per sync: pass --pipeline <name> (one long-running sync per node and pipeline)',
    )
}

/** A destination of the pipeline, as the refusal names it. */
export interface DestinationTier {
  /** `data_sinks.events`. */
  readonly where: string
  readonly type: string
  readonly guarantee: Guarantee
}

/** Refuses, at start-up, a destination whose retries could duplicate rows behind a clustered WAL. */
export function checkDestinationsFit(storage: WalStorage, destinations: readonly DestinationTier[]): void {
  if (storage !== 'clustered') return
  const unfit = destinations.find((d) => !CLUSTERED_TIERS.includes(d.guarantee))
  if (unfit) throw new WalStorageRefusesSinkError(unfit.where, unfit.type, unfit.guarantee)
}
