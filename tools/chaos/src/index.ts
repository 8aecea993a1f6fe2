export type { ChaosSource, SourceSettings, Verdict } from './chaos-source.js'
export { chaosSource } from './chaos-source.js'
export type { Audit, Destination, Row, SinkKind } from './destination.js'
export { duckdbDestination, postgresDestination, SINKS } from './destination.js'
export { amqpDestination } from './destination-amqp.js'
export { azureBlobDestination } from './destination-azure-blob.js'
export { clickhouseDestination } from './destination-clickhouse.js'
export { s3Destination } from './destination-s3.js'
export { sftpDestination } from './destination-sftp.js'
export { bigqueryDestination, snowflakeDestination } from './destination-warehouse.js'
export { CHAOS_NOT_BUILT, CHAOS_USAGE, ChaosUsageError, SkipprdNotBuiltError } from './errors.js'
export type { ChaosOptions, ChaosReport, RunRecord } from './harness.js'
export { runChaos } from './harness.js'
export { type HostLoss, startHostLoss } from './host-loss.js'
export type { DataObject, ObjectLayout, ReadBack, SortedKeys } from './object-audit.js'
export { auditObjects, sortKeys } from './object-audit.js'
export type { ObjectServer } from './object-destination.js'
export { objectDestination } from './object-destination.js'
export { appendFileRows, createRefusingTable, FILE_NAME, fileSourceEntry } from './refused-file.js'
export type { BadKind, FileRow, RefusedSinkKind, RowPlan } from './refused-rows.js'
export {
  badKindOf,
  csvLine,
  DESTINATION_KINDS,
  expectedRecord,
  FAR_FUTURE,
  FILE_FIELDS,
  fileRows,
  isRefusedSink,
  REFUSED_NOTE,
  REFUSED_SINKS,
  rowPlan,
  SOURCE_KINDS,
} from './refused-rows.js'
export type { RunOutcome, SyncRun } from './skipprd.js'
export { runSync, skipprdCli } from './skipprd.js'
export type { Expected } from './verify.js'
export { verifyExactlyOnce } from './verify.js'
export type { CopiesVerdict } from './verify-copies.js'
export { verifyOnceAfterCopies } from './verify-copies.js'
export type { RefusedCounts, RefusedExpected, RefusedVerdict } from './verify-refused.js'
export { verifyRefused } from './verify-refused.js'
