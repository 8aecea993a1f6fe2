import type { SinkDefinition } from '@skippr/connector-api'
import { PostgresBulkLoad } from './bulk-load.js'
import type { PostgresSinkConfig } from './config.js'
import { postgresSinkConfig } from './config.js'
import { PostgresSink } from './sink.js'

export type { PostgresSinkConfig, PostgresSinkOptions } from './config.js'
export { postgresSinkConfig } from './config.js'
export type { ServerFields } from './errors.js'
export {
  DATA_REJECTED,
  DataRejectedError,
  NAME_TOO_LONG,
  NameTooLongError,
  PERMISSION_DENIED,
  PermissionDeniedError,
  PostgresSinkError,
  RESERVED_NAME,
  ReservedNameError,
  STATEMENT_REJECTED,
  StatementRejectedError,
  TRANSIENT,
  TransientError,
  UNAVAILABLE,
  UnavailableError,
} from './errors.js'
export { PostgresSink } from './sink.js'

export const sink: SinkDefinition<PostgresSinkConfig> = {
  kind: 'sink',
  type: 'Postgres',
  guarantee: 'exactly-once',
  renamesColumns: true,
  config: postgresSinkConfig,
  secretFields: ['connection_string'],
  create: (config, context) => new PostgresSink(config, context.logger),
  bulkLoad: (config) => new PostgresBulkLoad(config),
}
