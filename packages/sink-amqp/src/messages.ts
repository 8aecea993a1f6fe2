/**
 * A batch as the messages that carry it: one per row or one per part, each with the identity of its
 * part, so that a consumer can drop the copies a retry publishes. Every part is decoded and counted
 * here, before anything is published.
 */
import type { BatchPart, NamespaceSchema, RecordFormat, SinkBatch } from '@skippr/connector-api'
import {
  batchKey,
  countRecords,
  csvHeader,
  parseCsv,
  partKey,
  RowCountMismatchError,
  recordRanges,
  transcode,
} from '@skippr/connector-api'
import type { Options } from 'amqplib'
import type { RoutingKey, RowValues } from './routing-key.js'

type Part = BatchPart & { readonly schema: NamespaceSchema }

export interface OutgoingMessage {
  readonly routingKey: string
  readonly content: Buffer
  readonly options: Options.Publish
}

export interface MessageShape {
  readonly format: RecordFormat
  readonly messagePer: 'row' | 'batch'
  readonly routingKey: RoutingKey
  /** Where the messages go, as a row-count mismatch names it. */
  readonly exchange: string
}

const CONTENT_TYPES = {
  row: { jsonl: 'application/json', csv: 'text/csv' },
  batch: { jsonl: 'application/x-ndjson', csv: 'text/csv' },
} as const

const LF = 10
const decoder = new TextDecoder()

/** A batch's messages, made one at a time as they are published, and how many there are. */
export interface OutgoingMessages extends Iterable<OutgoingMessage> {
  readonly count: number
}

/**
 * Every message of `batch`, in order. Each part is decoded, counted and given its routing keys
 * here, before anything is published: throws `RowCountMismatchError` for a part holding another
 * number of records than it declares, `BadRecordError` for one that does not decode, and
 * `RoutingKeyError` for a row the routing key cannot be made for. The messages themselves are made
 * as the publisher takes them, so a batch of many rows never holds a message object per row.
 */
export function outgoingMessages(batch: SinkBatch, shape: MessageShape): OutgoingMessages {
  const parts = batch.parts.map((part, index) => partMessages(batch, part as Part, index, shape))
  return {
    count: parts.reduce((sum, part) => sum + part.count, 0),
    *[Symbol.iterator]() {
      for (const part of parts) yield* part.messages()
    },
  }
}

function partMessages(
  batch: SinkBatch,
  part: Part,
  index: number,
  shape: MessageShape,
): { count: number; messages: () => Iterable<OutgoingMessage> } {
  const body = transcode(part, shape.format, part.schema.fields)
  const key = partKey(batch.id, index)
  // One headers object for every message of the part: amqplib only reads it.
  const headers = {
    'x-skippr-batch': key,
    'x-skippr-seq': batch.id.seq.toString(),
    'x-skippr-namespace': part.namespace,
  }
  const contentType = CONTENT_TYPES[shape.messagePer][shape.format]
  const options = (messageId: string): Options.Publish => ({
    persistent: true,
    mandatory: true,
    messageId,
    contentType,
    headers,
  })
  if (shape.messagePer === 'batch') {
    expectRows(batch, part, countRecords(body, shape.format), shape.exchange)
    if (part.rows === 0) return { count: 0, messages: () => [] }
    const routingKey = shape.routingKey.render(part.namespace)
    return {
      count: 1,
      messages: () => {
        const content = shape.format === 'csv' ? Buffer.concat([csvHeader(part.schema.fields), body]) : body
        return [{ routingKey, content: asBuffer(content), options: options(key) }]
      },
    }
  }
  const records = recordRanges(body, shape.format)
  expectRows(batch, part, records.length, shape.exchange)
  const routingKeys = routingKeysOf(part, shape, body, records.length)
  return {
    count: records.length,
    *messages() {
      for (const [row, [start, end]] of records.entries())
        yield {
          routingKey: routingKeys(row),
          // A CSV record keeps its line end, as the contract writes every record.
          content: asBuffer(body.subarray(start, shape.format === 'csv' && body[end] === LF ? end + 1 : end)),
          options: options(`${key}:${row}`),
        }
    },
  }
}

/**
 * Each row's routing key. A template that reads columns is rendered for every row now, so a row
 * without its value fails the batch before anything is published; one that does not is one key.
 */
function routingKeysOf(
  part: Part,
  shape: MessageShape,
  body: Uint8Array,
  rows: number,
): (row: number) => string {
  if (shape.routingKey.columns.length === 0) {
    const routingKey = shape.routingKey.render(part.namespace)
    return () => routingKey
  }
  const values = valuesOf(part, shape.format, body)
  const keys = Array.from({ length: rows }, (_, row) => shape.routingKey.render(part.namespace, values(row)))
  return (row) => keys[row]!
}

function expectRows(batch: SinkBatch, part: Part, held: number, exchange: string): void {
  if (held === part.rows) return
  throw new RowCountMismatchError({
    target: `namespace ${part.namespace} (exchange ${JSON.stringify(exchange)})`,
    batch: batchKey(batch.id),
    expected: part.rows,
    loaded: held,
  })
}

/** Each row's column values as their contract CSV text (null for NULL), for the routing key. */
function valuesOf(part: Part, format: RecordFormat, body: Uint8Array): (row: number) => RowValues {
  const csv = format === 'csv' ? body : transcode(part, 'csv', part.schema.fields)
  const records = parseCsv(decoder.decode(csv))
  const columns = new Map(part.schema.fields.map((field, index) => [field.name, index]))
  return (row) => ({
    index: row,
    value: (column) => {
      const at = columns.get(column)
      return at === undefined ? undefined : records[row]?.[at]
    },
  })
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
