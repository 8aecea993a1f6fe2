import type { SinkDefinition } from '@skippr/connector-api'
import { DuckdbBulkLoad } from './bulk-load.js'
import type { DuckdbConfig } from './config.js'
import { duckdbConfig } from './config.js'
import { DuckdbSink } from './sink.js'

export const sink: SinkDefinition<DuckdbConfig> = {
  kind: 'sink',
  type: 'Duckdb',
  guarantee: 'exactly-once',
  renamesColumns: true,
  config: duckdbConfig,
  secretFields: [],
  create: (config, context) => new DuckdbSink(config, context),
  bulkLoad: (config, context) => new DuckdbBulkLoad(config, context),
}

export type { DuckdbConfig } from './config.js'
export { duckdbConfig } from './config.js'
// The SQL vocabulary of the sink's tables, for readers that must see rows as the sink lands them (skipprd query).
export { createDatabaseFile } from './database-file.js'
export {
  DUCKDB_READ_FAILED,
  DUCKDB_REJECTED,
  DUCKDB_SCHEMA_FAILED,
  DUCKDB_UNAVAILABLE,
  DUCKDB_WRITE_FAILED,
  DuckdbReadError,
  DuckdbRejectedError,
  DuckdbSchemaError,
  DuckdbUnavailableError,
  DuckdbWriteError,
} from './errors.js'
export { loadFileChunks, readRecords } from './read.js'
export { DuckdbSink } from './sink.js'
export { columnsStruct, columnType, ident, literal } from './sql.js'
