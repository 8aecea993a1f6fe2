import { crossFieldCheck } from '@skippr/connector-api'
import * as v from 'valibot'
import { routingKey, templateProblem } from './routing-key.js'

export const EXCHANGE_TYPES = ['direct', 'fanout', 'topic', 'headers'] as const

export const amqpSinkConfig = v.pipe(
  v.strictObject({
    url: v.pipe(
      v.string(),
      v.regex(/^amqps?:\/\//, 'expected an amqp:// or amqps:// URL'),
      v.description(
        'amqp://user:password@host:5672/vhost (amqps:// for TLS; the vhost / is %2F or left out)',
      ),
    ),
    exchange: v.pipe(
      v.string(),
      v.description(
        "Exchange the messages are published to; '' is the default exchange (routing key = queue)",
      ),
    ),
    declare_exchange: v.optional(
      v.pipe(
        v.picklist(EXCHANGE_TYPES),
        v.description(
          'Declare the exchange (durable, of this type) when it is missing; without it the sink declares nothing',
        ),
      ),
    ),
    routing_key: v.optional(
      v.pipe(
        v.string(),
        v.check(
          (template) => templateProblem(template) === undefined,
          (issue) => templateProblem(String(issue.input)) ?? 'invalid template',
        ),
        v.description('Routing key template: {namespace} and {column:<name>} (a row value; message_per row)'),
      ),
      '{namespace}',
    ),
    format: v.optional(
      v.pipe(
        v.picklist(['jsonl', 'csv']),
        v.description(
          'Message body: jsonl (JSON object per row) or csv (a record per row, a header per batch)',
        ),
      ),
      'jsonl',
    ),
    message_per: v.optional(
      v.pipe(
        v.picklist(['row', 'batch']),
        v.description('row: one message per row; batch: one message per namespace part of a batch'),
      ),
      'row',
    ),
    max_unconfirmed: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(65535),
        v.description('Published messages the broker may not have confirmed yet before publishing waits'),
      ),
      1000,
    ),
  }),
  crossFieldCheck((config) => [
    ...(config.message_per === 'batch' && routingKey(config.routing_key).columns.length > 0
      ? [
          {
            path: ['routing_key'],
            message:
              'a {column:<name>} placeholder needs message_per: row, since a batch message has one routing key for all its rows',
          },
        ]
      : []),
    ...(config.declare_exchange !== undefined && config.exchange === ''
      ? [
          {
            path: ['declare_exchange'],
            message: "the default exchange ('') always exists and cannot be declared",
          },
        ]
      : []),
  ]),
)

export type AmqpSinkConfig = v.InferOutput<typeof amqpSinkConfig>
/** The config as written, before defaults. */
export type AmqpSinkOptions = v.InferInput<typeof amqpSinkConfig>
