export type { BatchIdentity, BatchPart, JsonValue, RecordFormat, SinkBatch, SourceOffset } from './batch.js'
export { BATCH_COLUMN, batchKey, partKey, RECORD_FORMATS } from './batch.js'
export type { CivilDate } from './calendar.js'
export { civilFromDays, dateText, timestampText } from './calendar.js'
export type { ConfigIssue, ConfigLocation, ConfigProblem, ConfigSchema, FieldProblem } from './config.js'
export { configProblem, crossFieldCheck, parseConnectorConfig } from './config.js'
export type { ConnectorContext, ConnectorDefinition } from './connector.js'
export { csvField, parseCsv } from './csv.js'
export { CsvCursor, NOT_ASCII, NULL_FIELD } from './csv-cursor.js'
export type { DeadletterStage, RefusedRecord } from './deadletter.js'
export {
  DEADLETTER_FIELDS,
  deadletterIdentity,
  deadletterNamespace,
  deadletterSchema,
} from './deadletter.js'
export { makeDirectory, makeDirectorySync } from './directory.js'
export type { RowCountCheck } from './errors.js'
export {
  BAD_RECORD,
  BadRecordError,
  CONFIG_INVALID,
  ConfigError,
  hasCode,
  isPermanent,
  permanent,
  ROW_COUNT_MISMATCH,
  RowCountMismatchError,
  ServiceError,
  SkipprError,
} from './errors.js'
export { BATCHES_TABLE, FENCED, FENCES_TABLE, FencedError } from './fencing.js'
export { countLines, csvValue, encodeCsv, encodeJsonl } from './formats.js'
export { csvValueType, FieldTypes, jsonValueType } from './infer.js'
export { findKeys, KeyRanges } from './json-keys.js'
export type { Logger } from './logger.js'
export { silentLogger } from './logger.js'
export { MemorySink, MemorySource } from './memory.js'
export type { Meter, MeterLabels, MeterRead, MeterSample } from './meter.js'
export { hasNetworkCode } from './network.js'
export { isProcessAlive } from './process.js'
export { countRecords, recordRanges, withoutRecords } from './records.js'
export { describeTarget } from './redact.js'
export type { Field, FieldType, NamespaceSchema } from './schema.js'
export { addedFields, evolveSchema, FIELD_TYPES, formerColumn, widenFieldType } from './schema.js'
export type { BulkLoad, Guarantee, RefusedRow, Sink, SinkDefinition, WriteOutcome } from './sink.js'
export { alreadyLanded, cannotLand, GUARANTEES, landed, refused, retryLater } from './sink.js'
export type { CommitWindow, ReadOptions, Source, SourceChunk, SourceDefinition, Standby } from './source.js'
export { csvHeader, transcode } from './transcode.js'
