export { WAL_FENCED, WAL_S3_ACCESS_DENIED, WAL_S3_BUCKET_MISSING, WAL_S3_UNAVAILABLE } from './errors.js'
export type { LogRecordStore } from './log-record.js'
export { type S3WalConfig, s3Wal } from './storage.js'
