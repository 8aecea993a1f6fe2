import type { SourceDefinition } from '@skippr/connector-api'
import { type FileConfig, fileConfig } from './config.js'
import { FileSource } from './source.js'

export type { FileConfig } from './config.js'
export { DEFAULT_CHUNK_BYTES, fileConfig } from './config.js'
export type { FilePlace } from './errors.js'
export {
  BadRecordError,
  FILE_BAD_RECORD,
  FILE_HEADER_INVALID,
  FILE_HEADER_MISMATCH,
  FILE_NO_RECORDS,
  FILE_NOT_FOUND,
  FILE_OFFSET_INVALID,
  FILE_PARQUET_INVALID,
  FILE_PARQUET_TYPE,
  FILE_PARQUET_VALUE,
  FILE_READ_FAILED,
  FILE_RECORD_TOO_LONG,
  FileOffsetError,
  FileReadError,
  HeaderInvalidError,
  HeaderMismatchError,
  NoFilesError,
  NoRecordsError,
  ParquetInvalidError,
  ParquetTextInvalidError,
  ParquetTypeError,
  ParquetValueTooLongError,
  RecordTooLongError,
} from './errors.js'
export type { FilePosition } from './offset.js'
export { FileSource, POLL_INTERVAL_MS } from './source.js'

/** The `File` source type of skippr.yml: `File: { path: data/*.csv, format: csv }`. */
export const source: SourceDefinition<FileConfig> = {
  kind: 'source',
  type: 'File',
  config: fileConfig,
  secretFields: [],
  create: (config, context) => new FileSource(config, context),
}
