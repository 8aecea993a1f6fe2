/**
 * RabbitMQ as a chaos destination: an exchange and a durable queue bound to it with `#`, both
 * named for the run and deleted on dispose. After the last run the queue is drained into the
 * mirror, each message's row tagged with its `x-skippr-batch` header.
 */
import { randomBytes } from 'node:crypto'
import { BATCH_COLUMN } from '@skippr/connector-api'
import amqp, { type Channel } from 'amqplib'
import type { Destination } from './destination.js'
import { duckdbMirror, mirrorEpochSeconds } from './duckdb-mirror.js'
import { MESSAGE_COLUMN } from './verify-copies.js'

export const AMQP_URL_VARIABLE = 'SKIPPR_CHAOS_AMQP_URL'

export async function amqpDestination(workDir: string, url: string): Promise<Destination> {
  const name = `skippr_chaos_${randomBytes(6).toString('hex')}`
  // Without noDelay, each small frame waits for the broker's delayed ACK (about 40 ms).
  const connection = await amqp.connect(url, { noDelay: true })
  const channel = await connection.createChannel()
  await channel.assertExchange(name, 'topic', { durable: true })
  await channel.assertQueue(name, { durable: true })
  await channel.bindQueue(name, name, '#')
  const mirror = duckdbMirror(workDir, async () => ({ lines: await drain(channel, name) }))
  return {
    label: `RabbitMQ exchange and queue ${name}`,
    sink: { Amqp: { url: `\${${AMQP_URL_VARIABLE}}`, exchange: name } },
    env: { [AMQP_URL_VARIABLE]: url },
    retriesCopy: 'messages',
    schema: 'main',
    table: 'main."rentals"',
    qualify: (table) => `main."${table}"`,
    epochSeconds: mirrorEpochSeconds,
    query: (sql) => mirror.query(sql),
    async dispose({ keep }) {
      mirror.close()
      try {
        if (!keep) {
          await channel.deleteQueue(name)
          await channel.deleteExchange(name)
        }
      } finally {
        await connection.close()
      }
    },
  }
}

/**
 * Every message in `queue` as a JSON line of its row tagged with its `x-skippr-batch` header,
 * and its message id, consumed (and acked) until the queue holds none. Nothing publishes any more when it is called.
 */
async function drain(channel: Channel, queue: string): Promise<string> {
  const { messageCount } = await channel.checkQueue(queue)
  if (messageCount === 0) return ''
  const lines: string[] = []
  await channel.prefetch(1000)
  await new Promise<void>((resolve, reject) => {
    channel.on('close', () => reject(new Error(`the channel closed while draining ${queue}`)))
    void channel
      .consume(queue, (message) => {
        if (!message) return
        const row = JSON.parse(message.content.toString('utf8')) as Record<string, unknown>
        row[BATCH_COLUMN] = String(message.properties.headers?.['x-skippr-batch'])
        row[MESSAGE_COLUMN] = String(message.properties.messageId)
        lines.push(JSON.stringify(row))
        channel.ack(message)
        if (lines.length === messageCount) resolve()
      })
      .catch(reject)
  })
  return `${lines.join('\n')}\n`
}
