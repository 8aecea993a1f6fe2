import { atLeastOnceSuite, parseCsvWithHeader } from '@skippr/conformance'
import { BATCH_COLUMN } from '@skippr/connector-api'
import type { GetMessage } from 'amqplib'
import type { AmqpSinkOptions } from '../src/config.js'
import { amqpSink, TestBroker } from './broker.js'

type Shape = Pick<AmqpSinkOptions, 'message_per' | 'format'>

/** The suite against a topic exchange whose one queue (bound `#`) keeps every message the sink publishes. */
function suite(shape: Shape): void {
  let broker: TestBroker
  let exchange: string
  let queue: string
  const seen: GetMessage[] = []
  atLeastOnceSuite({
    name: `amqp (message_per ${shape.message_per}, ${shape.format})`,
    async setup() {
      broker = await TestBroker.open()
      ;({ exchange, queue } = await broker.topic('conformance'))
    },
    createSink: async () => amqpSink({ exchange, ...shape }),
    async readRows(namespace) {
      seen.push(...(await broker.drain(queue)))
      return seen
        .filter((message) => message.properties.headers?.['x-skippr-namespace'] === namespace)
        .flatMap((message) =>
          rowsOf(message).map((row) => ({
            ...row,
            [BATCH_COLUMN]: message.properties.headers?.['x-skippr-batch'],
          })),
        )
    },
    cleanup: () => broker.close(),
  })
}

function rowsOf(message: GetMessage): Record<string, unknown>[] {
  const text = message.content.toString('utf8')
  if (message.properties.contentType === 'text/csv') return parseCsvWithHeader(text)
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

suite({ message_per: 'row', format: 'jsonl' })
suite({ message_per: 'batch', format: 'jsonl' })
suite({ message_per: 'batch', format: 'csv' })
