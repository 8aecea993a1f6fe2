/**
 * The real RabbitMQ the tests publish to, and the exchanges and queues they declare on it, each
 * uniquely named per run and deleted afterwards.
 */
import { randomBytes } from 'node:crypto'
import { silentLogger } from '@skippr/connector-api'
import { type Channel, type ChannelModel, connect, type GetMessage } from 'amqplib'
import type { AmqpSinkOptions } from '../src/config.js'
import { AmqpSink } from '../src/sink.js'

export const AMQP_URL = process.env.SKIPPR_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672/'

export function uniqueName(label: string): string {
  return `skippr_test_${label}_${randomBytes(4).toString('hex')}`
}

export class TestBroker {
  private readonly exchanges: string[] = []
  private readonly queues: string[] = []

  private constructor(
    private readonly model: ChannelModel,
    private readonly channel: Channel,
  ) {}

  static async open(): Promise<TestBroker> {
    const model = await connect(AMQP_URL, { noDelay: true })
    const channel = await model.createChannel()
    // A refused operation rejects its own promise; the channel's event would end the process.
    channel.on('error', () => {})
    return new TestBroker(model, channel)
  }

  /** A topic exchange, and a queue bound to it with `#` unless `bound` is false. */
  async topic(label: string, bound = true): Promise<{ exchange: string; queue: string }> {
    const exchange = uniqueName(label)
    await this.channel.assertExchange(exchange, 'topic', { durable: false })
    this.exchanges.push(exchange)
    const queue = await this.queue(label)
    if (bound) await this.channel.bindQueue(queue, exchange, '#')
    return { exchange, queue }
  }

  /** Deletes `exchange` at close, as if this broker had declared it (a sink under test will). */
  forgetExchangeAfter(exchange: string): void {
    this.exchanges.push(exchange)
  }

  /**
   * Whether `exchange` exists as a durable exchange of `type`: declaring it so again succeeds only
   * then (the broker refuses a declare that contradicts the exchange, and closes that channel).
   */
  async isDurableExchange(exchange: string, type: string): Promise<boolean> {
    const channel = await this.model.createChannel()
    channel.on('error', () => {})
    try {
      await channel.checkExchange(exchange)
      await channel.assertExchange(exchange, type, { durable: true })
      await channel.close()
      return true
    } catch {
      return false
    }
  }

  async queue(label: string): Promise<string> {
    const queue = uniqueName(label)
    await this.channel.assertQueue(queue, { durable: false })
    this.queues.push(queue)
    return queue
  }

  /** A queue bound to `exchange` with `#` that holds one message and nacks every publish after. */
  async fullQueue(queue: string, exchange: string): Promise<void> {
    await this.channel.assertQueue(queue, {
      durable: false,
      arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    })
    this.queues.push(queue)
    await this.channel.bindQueue(queue, exchange, '#')
  }

  /** The messages in the queue now. */
  async depth(queue: string): Promise<number> {
    return (await this.channel.checkQueue(queue)).messageCount
  }

  async bind(queue: string, exchange: string, pattern: string): Promise<void> {
    await this.channel.bindQueue(queue, exchange, pattern)
  }

  /** Every message in the queue now, acknowledged. */
  async drain(queue: string): Promise<GetMessage[]> {
    const messages: GetMessage[] = []
    for (let message = await this.channel.get(queue); message; message = await this.channel.get(queue)) {
      messages.push(message)
      this.channel.ack(message)
    }
    return messages
  }

  async close(): Promise<void> {
    for (const queue of this.queues) await this.channel.deleteQueue(queue)
    for (const exchange of this.exchanges) await this.channel.deleteExchange(exchange)
    await this.model.close()
  }
}

export function amqpSink(options: Partial<AmqpSinkOptions> & Pick<AmqpSinkOptions, 'exchange'>): AmqpSink {
  return new AmqpSink({ url: AMQP_URL, ...options }, silentLogger)
}
