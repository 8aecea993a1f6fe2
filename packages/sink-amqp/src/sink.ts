import type { Guarantee, Logger, NamespaceSchema, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { cannotLand, describeTarget, landed, permanent } from '@skippr/connector-api'
import type { Message } from 'amqplib'
import { parse } from 'valibot'
import { classify, type FailureContext, outcomeOf } from './classify.js'
import { type AmqpSinkConfig, type AmqpSinkOptions, amqpSinkConfig } from './config.js'
import { ExchangeMismatchError, RoutingKeyError, replyCodeOf, UnroutableError } from './errors.js'
import { Link } from './link.js'
import { type OutgoingMessages, outgoingMessages } from './messages.js'
import { publishAll } from './publisher.js'
import { type RoutingKey, routingKey } from './routing-key.js'

/** The broker's reply to a declare that contradicts the existing exchange. */
const PRECONDITION_FAILED = 406

/**
 * At-least-once into RabbitMQ: every row (or every part) of a batch is a persistent, mandatory
 * message on one confirm channel, and the batch is landed once the broker has confirmed them all
 * and returned none. A retry publishes the batch again under the same message ids, which a consumer
 * uses to drop the copies. The sink declares the exchange only when `declare_exchange` asks it
 * to; queues and bindings are the broker owner's.
 */
export class AmqpSink implements Sink {
  readonly guarantee: Guarantee = 'at-least-once'
  private readonly config: AmqpSinkConfig
  private readonly routingKey: RoutingKey
  private readonly where: FailureContext
  private link: Promise<Link> | undefined

  /** `config` as in skippr.yml; keys left out take their defaults. */
  constructor(
    config: AmqpSinkOptions,
    private readonly logger: Logger,
  ) {
    this.config = parse(amqpSinkConfig, config)
    this.routingKey = routingKey(this.config.routing_key)
    this.where = { target: describeTarget(config.url), vhost: vhostOf(config.url), exchange: config.exchange }
  }

  async prepare(schema: NamespaceSchema): Promise<void> {
    const missing = this.routingKey.columns.find((column) => !schema.fields.some((f) => f.name === column))
    if (missing !== undefined)
      throw permanent(
        new RoutingKeyError(
          `namespace ${schema.namespace}: routing_key uses {column:${missing}}, but the namespace has no ` +
            'such column; change routing_key',
        ),
      )
    const { exchange, declare_exchange: type } = this.config
    try {
      const link = await this.open()
      if (type !== undefined) await link.declareExchange(exchange, type)
      else if (exchange !== '') await link.checkExchange(exchange)
    } catch (error) {
      if (type !== undefined && replyCodeOf(error) === PRECONDITION_FAILED)
        throw permanent(new ExchangeMismatchError(this.where.target, exchange, type, error))
      const failure = classify(error, this.where)
      throw failure.retry ? failure.error : permanent(failure.error)
    }
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    let messages: OutgoingMessages
    try {
      messages = outgoingMessages(batch, {
        format: this.config.format,
        messagePer: this.config.message_per,
        routingKey: this.routingKey,
        exchange: this.config.exchange,
      })
    } catch (error) {
      // A miscounted or undecodable part, or a row without its routing value: never publishable.
      return cannotLand(error)
    }
    let link: Link
    try {
      link = await this.open()
    } catch (error) {
      return outcomeOf(classify(error, this.where))
    }
    const published = await publishAll(
      link.channel,
      this.config.exchange,
      messages,
      this.config.max_unconfirmed,
    )
    if (published.status === 'returned') return cannotLand(unroutable(published.message))
    if (published.status === 'failed') return outcomeOf(classify(link.closedBy(published.error), this.where))
    const rows = batch.parts.reduce((sum, part) => sum + part.rows, 0)
    const { pipeline, epoch, seq } = batch.id
    this.logger.debug('batch landed', {
      pipeline,
      epoch,
      seq: seq.toString(),
      rows,
      messages: messages.count,
    })
    return landed(rows)
  }

  async close(): Promise<void> {
    const link = this.link
    this.link = undefined
    await link?.then(
      (open) => open.close(),
      () => {},
    )
  }

  /** The open link, opening a new one when there is none or the last one was closed. */
  private async open(): Promise<Link> {
    this.link ??= Link.open(this.config.url)
    const opening = this.link
    let link: Link
    try {
      link = await opening
    } catch (error) {
      if (this.link === opening) this.link = undefined
      throw error
    }
    if (!link.closed) return link
    if (this.link === opening) this.link = undefined
    await link.close()
    return this.open()
  }
}

/** The vhost a URL names, as RabbitMQ reads it (`/` when the path is empty). */
function vhostOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || '/'
  } catch {
    return '/'
  }
}

/** The refusal of a message the broker returned (basic.return), from what the broker sent back. */
function unroutable(message: Message): UnroutableError {
  const { exchange, routingKey, replyText } = message.fields as Message['fields'] & { replyText?: string }
  const namespace = String(message.properties.headers?.['x-skippr-namespace'] ?? '?')
  return new UnroutableError(exchange, routingKey, namespace, replyText ?? 'NO_ROUTE')
}
