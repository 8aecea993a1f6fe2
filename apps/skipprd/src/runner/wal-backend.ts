/**
 * Which WAL backend a pipeline's WAL is opened on (`WAL_STORAGE`, parsed in config/wal-storage.ts):
 * `disk` from @skippr/wal, `s3` from @skippr/wal-s3 and `clustered` from @skippr/wal-cluster, which
 * the user installs beside skippr.yml and which are loaded only when asked for. The S3 WAL's log
 * record (watermark, writers) and the clustered WAL's in-sync set live in the state store.
 */
import { embeddedStore, type PipelineState } from '@skippr/state'
import type { WalBackendType } from '@skippr/wal'
import type * as WalCluster from '@skippr/wal-cluster'
import type { S3WalConfig } from '@skippr/wal-s3'
import type { PipelineSettings } from '../config/settings.js'
import { ConnectorMissingError, WalStorageUnavailableError } from '../errors.js'
import { importPackage } from '../installed-package.js'

const S3_PACKAGE = '@skippr/wal-s3'
const CLUSTER_PACKAGE = '@skippr/wal-cluster'

/** Refuses, at once and before anything opens, a WAL storage this pipeline cannot have. */
export function checkWalStorage(settings: PipelineSettings): void {
  // The in-sync set decides which node may take over: every node must read the same one.
  if (settings.walStorage === 'clustered' && settings.store.type === embeddedStore.name)
    throw new WalStorageUnavailableError(
      `WAL_STORAGE=clustered needs a state store every node shares: set SKIPPR_STORE_TYPE=dynamodb (the ${embeddedStore.name} store is in this host's DATA_DIR)`,
    )
  if (settings.walStorage === 's3' && !settings.walS3Bucket)
    throw new WalStorageUnavailableError(
      'WAL_STORAGE=s3 needs a bucket: set SKIPPR_WAL_S3_BUCKET (or SKIPPR_S3_BUCKET), --wal-s3-bucket, or skippr.wal_s3_bucket in skippr.yml',
    )
}

/**
 * The backend type to pass to openWal() and openWalSnapshot(); @skippr/wal(-s3, -cluster) load on
 * first use. A clustered WAL is opened for writing only by the holder of the writer lease, through
 * `leader` (cluster-node.ts); without it only its snapshot opens (query, df, SHOW).
 */
export function walBackend(
  settings: PipelineSettings,
  state: PipelineState,
  leader?: WalBackendType,
): WalBackendType {
  checkWalStorage(settings)
  if (settings.walStorage === 'clustered') return leader ?? clusterReader(settings)
  if (settings.walStorage !== 's3') return DISK
  let loaded: Promise<WalBackendType> | undefined
  const s3 = () => {
    loaded ??= loadS3(settings, state)
    return loaded
  }
  return {
    name: 's3',
    open: async (options) => (await s3()).open(options),
    openSnapshot: async (options) => (await s3()).openSnapshot(options),
  }
}

const DISK: WalBackendType = {
  name: 'disk',
  open: async (options) => (await import('@skippr/wal')).diskWal.open(options),
  openSnapshot: async (options) => (await import('@skippr/wal')).diskWal.openSnapshot(options),
}

async function loadS3(settings: PipelineSettings, state: PipelineState): Promise<WalBackendType> {
  const module = (await importPackage(S3_PACKAGE, settings.store.packageDir)) as
    | { s3Wal?: (config: S3WalConfig) => WalBackendType }
    | undefined
  if (module?.s3Wal === undefined) throw new ConnectorMissingError('WAL_STORAGE=s3', 'the s3 WAL', S3_PACKAGE)
  return module.s3Wal({
    bucket: settings.walS3Bucket ?? '',
    workspace: state.workspace,
    endpoint: settings.walS3Endpoint,
    // This backend type opens this one pipeline's WAL.
    records: () => state.walRecord(),
  })
}

/** @skippr/wal-cluster, loaded from beside skippr.yml, else skipprd's own dependencies. */
export async function loadCluster(settings: PipelineSettings): Promise<typeof WalCluster> {
  const module = (await importPackage(CLUSTER_PACKAGE, settings.store.packageDir)) as
    | Partial<typeof WalCluster>
    | undefined
  if (module?.clusteredWal === undefined)
    throw new ConnectorMissingError('WAL_STORAGE=clustered', 'the clustered WAL', CLUSTER_PACKAGE)
  return module as typeof WalCluster
}

/** The local log (a leader's or a peer's copy) read without taking part in the cluster. */
function clusterReader(settings: PipelineSettings): WalBackendType {
  return {
    name: 'clustered',
    open: async () => {
      throw new WalStorageUnavailableError(
        `WAL_STORAGE=clustered: pipeline '${settings.name}' is written only by the sync holding its writer lease; RESET PIPELINE and setting a batch aside are not available in this mode yet`,
      )
    },
    openSnapshot: async (options) => (await loadCluster(settings)).openClusteredSnapshot(options),
  }
}
