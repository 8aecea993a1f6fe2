import type { SinkDefinition } from '@skippr/connector-api'
import type { SnowflakeSinkConfig } from './config.js'
import { snowflakeSinkConfig } from './config.js'
import { SnowflakeSink } from './sink.js'

export type { SnowflakeSinkConfig, SnowflakeSinkOptions } from './config.js'
export { snowflakeSinkConfig } from './config.js'
export { SNOWFLAKE_REFUSED, SNOWFLAKE_TRANSIENT, SnowflakeError } from './errors.js'
export { SnowflakeSink } from './sink.js'

export const sink: SinkDefinition<SnowflakeSinkConfig> = {
  kind: 'sink',
  type: 'Snowflake',
  guarantee: 'exactly-once',
  config: snowflakeSinkConfig,
  secretFields: ['password', 'private_key', 'private_key_passphrase'],
  create: (config, context) => new SnowflakeSink(config, context.logger),
}
