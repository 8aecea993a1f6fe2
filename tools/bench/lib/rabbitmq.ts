/**
 * The RabbitMQ the bench publishes to: a fresh topic exchange and a durable queue bound to it with
 * `#` for each round, deleted after; and the capture of the messages skipprd's AMQP sink published,
 * as the files lib/amqp-publish.mjs publishes again.
 */
import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { finished } from 'node:stream/promises'
import { type Channel, type ChannelModel, type ConsumeMessage, connect } from 'amqplib'

export const AMQP_URL = process.env.SKIPPR_BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672/'

export interface Topic {
  readonly exchange: string
  readonly queue: string
}

/**
 * A run of messages of one batch part, as the sink publishes them: message `row` of the run has
 * the id `<key>:<row>`, and all carry the same headers and properties.
 */
export interface CapturedPart {
  readonly key: string
  readonly seq: string
  readonly namespace: string
  readonly contentType: string
  readonly rows: number
}

export class Broker {
  private constructor(
    private readonly model: ChannelModel,
    private readonly channel: Channel,
  ) {}

  static async open(): Promise<Broker> {
    const model = await connect(AMQP_URL)
    const channel = await model.createChannel()
    return new Broker(model, channel)
  }

  /**
   * A durable queue, as persistent messages need to be kept on disk; the broker confirms them once
   * written there, which is the pace both publishers meet.
   */
  async freshTopic(label: string): Promise<Topic> {
    const name = `skippr_bench_${label}_${randomBytes(4).toString('hex')}`
    await this.channel.assertExchange(name, 'topic', { durable: false })
    await this.channel.assertQueue(name, { durable: true })
    await this.channel.bindQueue(name, name, '#')
    return { exchange: name, queue: name }
  }

  async depth(queue: string): Promise<number> {
    return (await this.channel.checkQueue(queue)).messageCount
  }

  async purge(queue: string): Promise<void> {
    await this.channel.purgeQueue(queue)
  }

  async remove(topic: Topic): Promise<void> {
    await this.channel.deleteQueue(topic.queue)
    await this.channel.deleteExchange(topic.exchange)
  }

  /**
   * Takes the queue's `count` messages off it: their bodies, a line each, to `bodiesFile`, and
   * their parts to `partsFile` (JSON). Throws for a message the parts cannot describe, so that
   * what is published again is what the sink published.
   */
  async capture(queue: string, count: number, bodiesFile: string, partsFile: string): Promise<void> {
    const bodies = createWriteStream(bodiesFile)
    const parts: CapturedPart[] = []
    let taken = 0
    let problem: Error | undefined
    let allTaken = () => {}
    const done = new Promise<void>((resolve) => {
      allTaken = resolve
    })
    const { consumerTag } = await this.channel.consume(
      queue,
      (message) => {
        if (!message) return
        problem ??= take(parts, message)
        bodies.write(message.content)
        bodies.write('\n')
        if (++taken === count) allTaken()
      },
      { noAck: true },
    )
    await done
    await this.channel.cancel(consumerTag)
    bodies.end()
    await finished(bodies)
    if (problem) throw problem
    await writeFile(partsFile, JSON.stringify(parts))
  }

  async close(): Promise<void> {
    await this.model.close()
  }
}

const HEADERS = ['x-skippr-batch', 'x-skippr-namespace', 'x-skippr-seq']

/** Adds `message` to the last part or a new one; returns why it fits neither. */
function take(parts: CapturedPart[], message: ConsumeMessage): Error | undefined {
  const { headers = {}, messageId, contentType, deliveryMode } = message.properties
  const key = String(headers['x-skippr-batch'])
  let last = parts.at(-1)
  if (last?.key !== key) {
    last = {
      key,
      seq: String(headers['x-skippr-seq']),
      namespace: String(headers['x-skippr-namespace']),
      contentType: String(contentType),
      rows: 0,
    }
    parts.push(last)
  }
  const expected = {
    messageId: `${key}:${last.rows}`,
    routingKey: last.namespace,
    contentType: last.contentType,
    deliveryMode: 2,
    headers: HEADERS.join(),
    newline: false,
  }
  const got = {
    messageId,
    routingKey: message.fields.routingKey,
    contentType,
    deliveryMode,
    headers: Object.keys(headers).sort().join(),
    newline: message.content.includes(10),
  }
  parts[parts.length - 1] = { ...last, rows: last.rows + 1 }
  if (JSON.stringify(got) !== JSON.stringify(expected))
    return new Error(
      `a captured message is not as expected: ${JSON.stringify(got)} ≠ ${JSON.stringify(expected)}`,
    )
  return undefined
}
