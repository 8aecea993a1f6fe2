import type { SinkDefinition } from '@skippr/connector-api'
import type { AmqpSinkConfig } from './config.js'
import { amqpSinkConfig } from './config.js'
import { AmqpSink } from './sink.js'

export type { AmqpSinkConfig, AmqpSinkOptions } from './config.js'
export { amqpSinkConfig, EXCHANGE_TYPES } from './config.js'
export {
  ACCESS_REFUSED,
  AccessRefusedError,
  AmqpSinkError,
  EXCHANGE_MISMATCH,
  EXCHANGE_MISSING,
  ExchangeMismatchError,
  ExchangeMissingError,
  REJECTED,
  RejectedError,
  ROUTING_KEY,
  RoutingKeyError,
  TRANSIENT,
  TransientError,
  UNAVAILABLE,
  UNROUTABLE,
  UnavailableError,
  UnroutableError,
  VHOST_REFUSED,
  VhostRefusedError,
} from './errors.js'
export { AmqpSink } from './sink.js'

export const sink: SinkDefinition<AmqpSinkConfig> = {
  kind: 'sink',
  type: 'Amqp',
  guarantee: 'at-least-once',
  config: amqpSinkConfig,
  secretFields: ['url'],
  create: (config, context) => new AmqpSink(config, context.logger),
}
