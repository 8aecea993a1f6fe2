import type { SinkDefinition } from '@skippr/connector-api'
import type { ClickhouseSinkConfig } from './config.js'
import { clickhouseSinkConfig } from './config.js'
import { ClickhouseSink } from './sink.js'

export type { Column, ColumnType } from './column-types.js'
export { BOOLEAN_TYPE, columnTypeOf } from './column-types.js'
export type { ClickhouseSinkConfig, ClickhouseSinkOptions, Engine } from './config.js'
export { clickhouseSinkConfig, ENGINES } from './config.js'
export { BATCHES_TABLE } from './ddl.js'
// The encoder on its own, for the encoding benchmark (tools/bench clickhouse-encode).
export type { EncodedPart, PartContext } from './encode-part.js'
export { encodePart } from './encode-part.js'
export {
  AUTHENTICATION_FAILED,
  AuthenticationError,
  ClickhouseSinkError,
  DATA_REJECTED,
  DataRejectedError,
  NO_PRIMARY_KEY,
  NoPrimaryKeyError,
  PERMISSION_DENIED,
  PermissionDeniedError,
  RECORD_REFUSED,
  RESERVED_NAME,
  ReservedNameError,
  STATEMENT_REJECTED,
  StatementRejectedError,
  TRANSIENT,
  TransientError,
  UNAVAILABLE,
  UNSUPPORTED_COLUMN,
  UnavailableError,
  UnsupportedColumnError,
  VALUE_REFUSED,
} from './errors.js'
export type { Part } from './part-records.js'
export { supportsDeduplicationToken } from './server-version.js'
export { ClickhouseSink } from './sink.js'

export const sink: SinkDefinition<ClickhouseSinkConfig> = {
  kind: 'sink',
  type: 'Clickhouse',
  guarantee: 'at-least-once',
  config: clickhouseSinkConfig,
  secretFields: ['password'],
  create: (config, context) => new ClickhouseSink(config, context.logger),
}
