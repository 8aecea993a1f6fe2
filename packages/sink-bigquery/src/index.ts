import type { SinkDefinition } from '@skippr/connector-api'
import type { BigquerySinkConfig } from './config.js'
import { bigquerySinkConfig } from './config.js'
import { BigquerySink } from './sink.js'

export type { BigquerySinkConfig, BigquerySinkOptions } from './config.js'
export { bigquerySinkConfig } from './config.js'
export { BIGQUERY_REFUSED, BIGQUERY_TRANSIENT, BigqueryError } from './errors.js'
export { BigquerySink } from './sink.js'

export const sink: SinkDefinition<BigquerySinkConfig> = {
  kind: 'sink',
  type: 'Bigquery',
  guarantee: 'exactly-once',
  config: bigquerySinkConfig,
  secretFields: ['credentials', 'access_token'],
  create: (config, context) => new BigquerySink(config, context.logger),
}
