import { makeBatch } from '@skippr/conformance'
import type { NamespaceSchema, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { hasCode, isPermanent, parseConnectorConfig, partKey } from '@skippr/connector-api'
import { type ConfirmChannel, connect, type GetMessage } from 'amqplib'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { AmqpSinkOptions } from '../src/config.js'
import {
  ACCESS_REFUSED,
  type AmqpSink,
  sink as definition,
  EXCHANGE_MISMATCH,
  EXCHANGE_MISSING,
  ROUTING_KEY,
  TRANSIENT,
  UNAVAILABLE,
  UNROUTABLE,
  VHOST_REFUSED,
} from '../src/index.js'
import { AMQP_URL, amqpSink, TestBroker, uniqueName } from './broker.js'
import { CuttingProxy } from './proxy.js'

const orders: NamespaceSchema = {
  namespace: 'orders',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'region', type: 'string' },
    { name: 'price', type: 'double' },
    { name: 'paid', type: 'boolean' },
    { name: 'doc', type: 'json' },
  ],
}

const rows = [
  { id: 1, region: 'eu', price: 1.5, paid: true, doc: { a: [1, null] } },
  { id: 2, region: 'us', price: null, paid: false, doc: null },
  { id: 3, region: 'eu', price: -2, paid: null, doc: [2] },
]

function ordersBatch(count = rows.length, seq = 1): SinkBatch {
  const many = Array.from({ length: count }, (_, i) => ({ ...rows[i % rows.length], id: i + 1 }))
  return makeBatch({ pipeline: 'p', seq, parts: [{ schema: orders, format: 'csv', rows: many }] })
}

const secret = 'hunter2-secret'
let broker: TestBroker
const sinks: AmqpSink[] = []

beforeAll(async () => {
  broker = await TestBroker.open()
})
afterEach(async () => {
  for (const sink of sinks.splice(0)) await sink.close()
})
afterAll(async () => {
  await broker.close()
})

function open(options: Partial<AmqpSinkOptions> & Pick<AmqpSinkOptions, 'exchange'>): AmqpSink {
  const sink = amqpSink(options)
  sinks.push(sink)
  return sink
}

function urlWith(change: (url: URL) => void): string {
  const url = new URL(AMQP_URL)
  change(url)
  return url.toString()
}

function errorOf(outcome: WriteOutcome): (Error & { code?: unknown }) | undefined {
  return 'error' in outcome ? outcome.error : undefined
}

const headers = (message: GetMessage) => message.properties.headers as Record<string, unknown>

describe('the messages', () => {
  it('one per row: typed JSON, persistent, with message id, content type and the batch headers', async () => {
    const { exchange, queue } = await broker.topic('rows')
    const sink = open({ exchange })
    await sink.prepare(orders)
    const batch = makeBatch({
      pipeline: 'p',
      seq: 42,
      parts: [
        { schema: orders, format: 'csv', rows: rows.slice(0, 2) },
        { schema: orders, format: 'jsonl', rows: rows.slice(2) },
      ],
    })
    expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 3 })
    const messages = await broker.drain(queue)
    const first = partKey(batch.id, 0)
    const second = partKey(batch.id, 1)
    expect(
      messages.map((m) => ({
        routingKey: m.fields.routingKey,
        messageId: m.properties.messageId,
        deliveryMode: m.properties.deliveryMode,
        contentType: m.properties.contentType,
        headers: headers(m),
        row: JSON.parse(m.content.toString()),
      })),
    ).toEqual(
      [first, first, second].map((key, i) => ({
        routingKey: 'orders',
        messageId: `${key}:${i === 2 ? 0 : i}`,
        deliveryMode: 2,
        contentType: 'application/json',
        headers: { 'x-skippr-batch': key, 'x-skippr-seq': '42', 'x-skippr-namespace': 'orders' },
        row: rows[i],
      })),
    )
  })

  it('one per row as csv: one record each, without a header', async () => {
    const { exchange, queue } = await broker.topic('rows_csv')
    const sink = open({ exchange, format: 'csv' })
    expect(await sink.write(ordersBatch(2))).toEqual({ status: 'landed', rows: 2 })
    const messages = await broker.drain(queue)
    expect(messages.map((m) => [m.properties.contentType, m.content.toString()])).toEqual([
      ['text/csv', '1,"eu",1.5,true,"{""a"":[1,null]}"\n'],
      ['text/csv', '2,"us",,false,\n'],
    ])
  })

  it('one per batch part: a JSON-lines or a CSV body with header, the part key as message id', async () => {
    for (const format of ['jsonl', 'csv'] as const) {
      const { exchange, queue } = await broker.topic(`batch_${format}`)
      const sink = open({ exchange, message_per: 'batch', format })
      const batch = ordersBatch(3)
      expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 3 })
      const [message, ...rest] = await broker.drain(queue)
      expect(rest).toEqual([])
      expect(message?.properties).toMatchObject({
        messageId: partKey(batch.id, 0),
        deliveryMode: 2,
        contentType: format === 'csv' ? 'text/csv' : 'application/x-ndjson',
        headers: {
          'x-skippr-batch': partKey(batch.id, 0),
          'x-skippr-seq': '1',
          'x-skippr-namespace': 'orders',
        },
      })
      const lines = message?.content.toString().split('\n')
      expect(lines?.length).toBe(format === 'csv' ? 5 : 4)
      expect(lines?.[0]).toBe(
        format === 'csv' ? '"id","region","price","paid","doc"' : JSON.stringify(rows[0]),
      )
    }
  })
})

describe('routing', () => {
  it('a routing key with {column:x} routes each row by its value', async () => {
    const { exchange, queue: eu } = await broker.topic('route', false)
    const us = await broker.queue('route_us')
    await broker.bind(eu, exchange, 'orders.eu')
    await broker.bind(us, exchange, 'orders.us')
    const sink = open({ exchange, routing_key: '{namespace}.{column:region}' })
    await sink.prepare(orders)
    expect(await sink.write(ordersBatch(3))).toEqual({ status: 'landed', rows: 3 })
    const ids = async (queue: string) =>
      (await broker.drain(queue)).map((m) => [m.fields.routingKey, JSON.parse(m.content.toString()).id])
    expect(await ids(eu)).toEqual([
      ['orders.eu', 1],
      ['orders.eu', 3],
    ])
    expect(await ids(us)).toEqual([['orders.us', 2]])
  })

  it('a row whose routing column is NULL: fatal naming the column, nothing published', async () => {
    const { exchange, queue } = await broker.topic('route_null')
    const sink = open({ exchange, routing_key: '{column:price}' })
    const outcome = await sink.write(ordersBatch(3))
    expect(outcome.status).toBe('fatal')
    expect(errorOf(outcome)?.code).toBe(ROUTING_KEY)
    expect(errorOf(outcome)?.message).toContain('{column:price}')
    expect(errorOf(outcome)?.message).toContain('row 2')
    expect(await broker.drain(queue)).toEqual([])
  })

  it('a routing column the schema lacks: prepare fails permanently', async () => {
    const { exchange } = await broker.topic('route_missing')
    const error = await open({ exchange, routing_key: '{column:nope}' })
      .prepare(orders)
      .catch((e: unknown) => e)
    expect(isPermanent(error)).toBe(true)
    expect(hasCode(error, ROUTING_KEY)).toBe(true)
    expect(String(error)).toContain('{column:nope}')
  })

  it('the config refuses unknown placeholders, and {column:x} with message_per batch', () => {
    const at = { file: 'skippr.yml', path: 'data_sinks.bus.Amqp' }
    const config = (extra: object) => () =>
      parseConnectorConfig(definition, { url: 'amqp://h/', exchange: 'x', ...extra }, at)
    expect(config({ routing_key: '{table}' })).toThrow(
      'skippr.yml: data_sinks.bus.Amqp.routing_key: unknown placeholder {table}: use {namespace} or {column:<name>}',
    )
    expect(config({ routing_key: '{column:id}', message_per: 'batch' })).toThrow(
      /routing_key: a \{column:<name>\} placeholder needs message_per: row/,
    )
    expect(config({ url: 'http://h/' })).toThrow(/url: expected an amqp:\/\/ or amqps:\/\/ URL/)
    expect(config({ exchange: '', declare_exchange: 'topic' })).toThrow(
      "skippr.yml: data_sinks.bus.Amqp.declare_exchange: the default exchange ('') always exists and cannot be declared",
    )
    expect(config({ declare_exchange: 'queue' })).toThrow(/declare_exchange:/)
    expect(config({})()).toMatchObject({ routing_key: '{namespace}', format: 'jsonl', max_unconfirmed: 1000 })
  })
})

describe('failures', () => {
  it('an unroutable message: fatal naming exchange and routing key, never landed', async () => {
    const { exchange } = await broker.topic('unroutable', false)
    const sink = open({ exchange })
    await sink.prepare(orders)
    const outcome = await sink.write(ordersBatch(3))
    expect(outcome.status).toBe('fatal')
    const error = errorOf(outcome)
    expect(error?.code).toBe(UNROUTABLE)
    expect(error?.message).toContain(`exchange "${exchange}" has no queue bound for routing key "orders"`)
    expect(error?.message).toContain('bind a queue')
  })

  it('a missing exchange: prepare fails permanently and a write is fatal, both naming it', async () => {
    const exchange = uniqueName('missing')
    const sink = open({ exchange })
    const prepared = await sink.prepare(orders).catch((e: unknown) => e)
    expect(isPermanent(prepared)).toBe(true)
    expect(hasCode(prepared, EXCHANGE_MISSING)).toBe(true)
    expect(String(prepared)).toContain(`exchange "${exchange}" does not exist`)
    const outcome = await sink.write(ordersBatch(1))
    expect(outcome.status).toBe('fatal')
    expect(errorOf(outcome)?.code).toBe(EXCHANGE_MISSING)
    expect(errorOf(outcome)?.message).toContain(exchange)
  })

  it('declare_exchange: a missing exchange is declared durable of that type, and the batch lands', async () => {
    const exchange = uniqueName('declared')
    broker.forgetExchangeAfter(exchange)
    const queue = await broker.queue('declared')
    const sink = open({ exchange, declare_exchange: 'topic' })
    await sink.prepare(orders)
    await broker.bind(queue, exchange, '#')
    expect(await sink.write(ordersBatch(2))).toEqual({ status: 'landed', rows: 2 })
    expect(await broker.drain(queue)).toHaveLength(2)
    expect(await broker.isDurableExchange(exchange, 'topic')).toBe(true)
    expect(await broker.isDurableExchange(exchange, 'direct')).toBe(false)
  })

  it('declare_exchange of another type than the existing exchange: permanent, one line naming it', async () => {
    const { exchange } = await broker.topic('other-type')
    const sink = open({ exchange, declare_exchange: 'direct' })
    const prepared = await sink.prepare(orders).catch((e: unknown) => e)
    expect(isPermanent(prepared)).toBe(true)
    expect(hasCode(prepared, EXCHANGE_MISMATCH)).toBe(true)
    expect(String(prepared)).toContain(`exchange "${exchange}" exists on`)
    expect(String(prepared)).toContain('not as a durable direct exchange')
    expect(String(prepared)).not.toContain('\n')
  })

  it('after a channel the broker closed, the next write reopens it and lands', async () => {
    const exchange = uniqueName('late')
    const sink = open({ exchange })
    expect((await sink.write(ordersBatch(1))).status).toBe('fatal')
    const { exchange: real, queue } = await broker.topic('late')
    const again = open({ exchange: real })
    expect(await again.write(ordersBatch(2))).toEqual({ status: 'landed', rows: 2 })
    expect(await broker.drain(queue)).toHaveLength(2)
  })

  it('a wrong password: permanent, one line, naming the broker without the password', async () => {
    const url = urlWith((u) => {
      u.password = secret
    })
    const sink = open({ url, exchange: '' })
    const prepared = await sink.prepare(orders).catch((e: unknown) => e)
    expect(isPermanent(prepared)).toBe(true)
    expect(hasCode(prepared, ACCESS_REFUSED)).toBe(true)
    const message = (prepared as Error).message
    expect(message).toContain(`refused access`)
    expect(message).toContain('amqp://guest@127.0.0.1:5672/')
    expect(message).not.toContain('\n')
    const outcome = await sink.write(ordersBatch(1))
    expect(outcome.status).toBe('fatal')
    for (const text of [
      message,
      JSON.stringify(prepared),
      (prepared as Error).stack,
      errorOf(outcome)?.message,
    ])
      expect(text).not.toContain(secret)
  })

  it('a missing vhost: permanent, naming the vhost', async () => {
    const vhost = uniqueName('vhost')
    const sink = open({ url: urlWith((u) => (u.pathname = `/${vhost}`)), exchange: '' })
    const prepared = await sink.prepare(orders).catch((e: unknown) => e)
    expect(isPermanent(prepared)).toBe(true)
    expect(hasCode(prepared, VHOST_REFUSED)).toBe(true)
    expect(String(prepared)).toContain(`vhost "${vhost}"`)
  })

  it('an unreachable port: transient, retry, password absent', async () => {
    const sink = open({ url: `amqp://guest:${secret}@127.0.0.1:1/`, exchange: 'x' })
    const prepared = await sink.prepare(orders).catch((e: unknown) => e)
    expect(isPermanent(prepared)).toBe(false)
    expect(hasCode(prepared, UNAVAILABLE)).toBe(true)
    const outcome = await sink.write(ordersBatch(1))
    expect(outcome.status).toBe('retry')
    expect(errorOf(outcome)?.code).toBe(UNAVAILABLE)
    expect(errorOf(outcome)?.message).toContain('amqp://guest@127.0.0.1:1/')
    for (const text of [String(prepared), JSON.stringify(errorOf(outcome)), errorOf(outcome)?.stack])
      expect(text).not.toContain(secret)
  })

  it('a nack (a full queue rejecting publishes): retry', async () => {
    const { exchange } = await broker.topic('nack', false)
    const queue = uniqueName('nack_full')
    await broker.fullQueue(queue, exchange)
    const outcome = await open({ exchange }).write(ordersBatch(3))
    expect(outcome.status).toBe('retry')
    expect(errorOf(outcome)?.code).toBe(TRANSIENT)
    expect(errorOf(outcome)?.message).toContain('nacked')
  })

  it('a connection lost mid-write: retry, and the next write reconnects and lands the whole batch', async () => {
    const { exchange, queue } = await broker.topic('lost')
    const target = new URL(AMQP_URL)
    const proxy = await CuttingProxy.start({ host: target.hostname, port: Number(target.port || 5672) })
    try {
      const sink = open({ url: urlWith((u) => (u.port = String(proxy.port))), exchange, max_unconfirmed: 5 })
      await sink.prepare(orders)
      const batch = ordersBatch(5000)
      const writing = sink.write(batch)
      await vi.waitFor(async () => expect(await broker.depth(queue)).toBeGreaterThan(0), { interval: 5 })
      proxy.cut()
      const outcome = await writing
      expect(outcome.status).toBe('retry')
      expect(errorOf(outcome)?.code).toBe(UNAVAILABLE)
      expect(await broker.depth(queue)).toBeLessThan(5000)
      expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 5000 })
      const ids = new Set((await broker.drain(queue)).map((m) => m.properties.messageId))
      expect(ids.size).toBe(5000)
    } finally {
      await proxy.stop()
    }
    // 10,000 messages five at a time through a proxy: seconds here, far more on a loaded CI machine.
  }, 120_000)

  it('close never throws, also twice and after a failure', async () => {
    const sink = open({ url: 'amqp://guest:guest@127.0.0.1:1/', exchange: 'x' })
    await sink.write(ordersBatch(1))
    await expect(sink.close()).resolves.toBeUndefined()
    await expect(sink.close()).resolves.toBeUndefined()
  })
})

describe('the window of unconfirmed messages', () => {
  it('with max_unconfirmed 5, never more than 5 published messages await their confirm', async () => {
    const { exchange, queue } = await broker.topic('window')
    const counting = await countInFlight()
    try {
      const sink = open({ exchange, max_unconfirmed: 5 })
      expect(await sink.write(ordersBatch(200))).toEqual({ status: 'landed', rows: 200 })
      expect(counting.most()).toBe(5)
      expect(await broker.drain(queue)).toHaveLength(200)
    } finally {
      await counting.stop()
    }
  })
})

/**
 * Counts, on every confirm channel, the messages published whose confirm callback has not run yet,
 * by wrapping amqplib's `ConfirmChannel.prototype.publish` for the test.
 */
async function countInFlight(): Promise<{ most(): number; stop(): Promise<void> }> {
  const model = await connect(AMQP_URL)
  const prototype = Object.getPrototypeOf(await model.createConfirmChannel()) as ConfirmChannel
  await model.close()
  const original = prototype.publish
  let inFlight = 0
  let most = 0
  const spy = vi.spyOn(prototype, 'publish').mockImplementation(function (
    this: ConfirmChannel,
    exchange,
    routingKey,
    content,
    options,
    callback,
  ) {
    const room = original.call(this, exchange, routingKey, content, options, (error, ok) => {
      inFlight--
      callback?.(error, ok)
    })
    most = Math.max(most, ++inFlight)
    return room
  })
  return { most: () => most, stop: async () => spy.mockRestore() }
}
