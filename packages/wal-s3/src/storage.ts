/** `WAL_STORAGE=s3` as a WAL backend type for `openWal` and `openWalSnapshot`. */
import { S3Client } from '@aws-sdk/client-s3'
import { type S3Settings, s3ClientConfig } from '@skippr/s3-client'
import type { WalBackendType } from '@skippr/wal'
import { Bucket } from './bucket.js'
import { FrameKeys } from './frame-keys.js'
import type { LogRecordStore } from './log-record.js'
import { openS3Backend } from './s3-backend.js'
import { S3SnapshotSource } from './s3-snapshot.js'

export interface S3WalConfig extends S3Settings {
  /** `SKIPPR_WAL_S3_BUCKET`: a bucket, optionally with a prefix (`bucket/some/prefix`). */
  readonly bucket: string
  /** The state workspace: one bucket can hold the WALs of several. */
  readonly workspace: string
  /** The pipeline's log record, in a store with compare-and-set (the state store). */
  readonly records: (pipeline: string) => LogRecordStore
}

export function s3Wal(config: S3WalConfig): WalBackendType {
  const [name = '', ...rest] = config.bucket.split('/')
  const prefix = rest.filter((part) => part !== '').join('/')
  const where = `s3://${name}${prefix ? `/${prefix}` : ''}`
  // One client for every pipeline's log: SDK clients are meant to live as long as the program.
  const client = new S3Client(s3ClientConfig(config))
  const bucket = new Bucket(client, name, where)
  const keys = (pipeline: string) => new FrameKeys(prefix, config.workspace, pipeline)
  return {
    name: 's3',
    open: (options) =>
      openS3Backend(options, bucket, keys(options.pipeline), config.records(options.pipeline)),
    openSnapshot: async (options) =>
      new S3SnapshotSource(bucket, keys(options.pipeline), config.records(options.pipeline)),
  }
}
