import type { SinkDefinition } from '@skippr/connector-api'
import { ObjectSink, objectSinkOptions } from '@skippr/object-sink'
import type { S3SinkConfig } from './config.js'
import { s3SinkConfig } from './config.js'
import { S3Store } from './store.js'

export type { S3SinkConfig } from './config.js'
export { MIN_PART_MIB, s3SinkConfig } from './config.js'
export { S3_ACCESS_DENIED, S3_BUCKET_MISSING, S3_REQUEST_REFUSED, S3_UNAVAILABLE } from './errors.js'
export { S3Store } from './store.js'

export const sink: SinkDefinition<S3SinkConfig> = {
  kind: 'sink',
  type: 'S3',
  guarantee: 'overwrite-on-retry',
  config: s3SinkConfig,
  secretFields: ['access_key_id', 'secret_access_key', 'session_token'],
  create: (config, context) => new ObjectSink(new S3Store(config), objectSinkOptions(config, context)),
}
