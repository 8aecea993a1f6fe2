import type { SourceDefinition } from '@skippr/connector-api'
import type { PostgresSourceConfig } from './config.js'
import { postgresSourceConfig } from './config.js'
import { PostgresSource } from './source.js'

export type { PostgresSourceConfig } from './config.js'
export { postgresSourceConfig } from './config.js'
export {
  CURSOR_NOT_FOUND,
  CursorNotFoundError,
  NO_KEY,
  NoKeyError,
  OFFSET_INVALID,
  OffsetInvalidError,
  QUERY_FAILED,
  QueryFailedError,
  SOURCE_UNAVAILABLE,
  SourceUnavailableError,
  TABLE_NOT_FOUND,
  TableNotFoundError,
} from './errors.js'
export { PostgresSource } from './source.js'

export const source: SourceDefinition<PostgresSourceConfig> = {
  kind: 'source',
  type: 'Postgres',
  config: postgresSourceConfig,
  secretFields: ['connection_string'],
  create: (config, context) => new PostgresSource(config, context.logger),
}
