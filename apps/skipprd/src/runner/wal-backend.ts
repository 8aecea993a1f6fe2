/**
 * Which WAL backend a pipeline's WAL is opened on (`WAL_STORAGE`, parsed in config/wal-storage.ts):
 * `disk` from @skippr/wal, `s3` from @skippr/wal-s3, which the user installs beside skippr.yml and
 * which is loaded only when asked for. Its log record (watermark, writers) lives in the state store.
 */
import type { PipelineState } from '@skippr/state'
import type { WalBackendType } from '@skippr/wal'
import type { S3WalConfig } from '@skippr/wal-s3'
import type { PipelineSettings } from '../config/settings.js'
import { ConnectorMissingError, WalStorageUnavailableError } from '../errors.js'
import { importPackage } from '../installed-package.js'

const S3_PACKAGE = '@skippr/wal-s3'

/** Refuses, at once and before anything opens, a WAL storage this pipeline cannot have. */
export function checkWalStorage(settings: PipelineSettings): void {
  if (settings.walStorage === 'clustered')
    throw new WalStorageUnavailableError(
      'WAL_STORAGE=clustered is not available in this build: use WAL_STORAGE=s3 with a dynamodb state store, or WAL_STORAGE=disk (the default) with a persistent DATA_DIR',
    )
  if (settings.walStorage === 's3' && !settings.walS3Bucket)
    throw new WalStorageUnavailableError(
      'WAL_STORAGE=s3 needs a bucket: set SKIPPR_WAL_S3_BUCKET (or SKIPPR_S3_BUCKET), --wal-s3-bucket, or skippr.wal_s3_bucket in skippr.yml',
    )
}

/** The backend type to pass to openWal() and openWalSnapshot(); @skippr/wal(-s3) load on first use. */
export function walBackend(settings: PipelineSettings, state: PipelineState): WalBackendType {
  checkWalStorage(settings)
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
