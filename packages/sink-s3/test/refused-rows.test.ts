/**
 * An object sink (S3 on s3rver) writing Parquet meets values their columns cannot hold: the write
 * answers `refused` naming every such row of the batch by its part, creates no object and no
 * manifest; the batch written again without them, as the runner does, lands the rest.
 */
import { makeBatch, objectRows, rawPart } from '@skippr/conformance'
import type { NamespaceSchema, RefusedRow, SinkBatch } from '@skippr/connector-api'
import { BAD_RECORD, withoutRecords } from '@skippr/connector-api'
import { ObjectSink } from '@skippr/object-sink'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3Store } from '../src/index.js'
import { s3Fixture } from './helpers.js'

const fixture = s3Fixture()
beforeAll(() => fixture.start())
afterAll(() => fixture.stop())

const schema: NamespaceSchema = {
  namespace: 'rentals',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'seen', type: 'timestamp' },
  ],
}

/** The batch without the refused rows, as the runner writes it again (same identity). */
function withoutRefused(batch: SinkBatch, rows: readonly RefusedRow[]): SinkBatch {
  const parts = batch.parts.map((part, index) => {
    const refused = new Set(rows.filter((r) => r.part === index).map((r) => r.row))
    return {
      ...part,
      body: withoutRecords(part.body, part.format, refused).body,
      rows: part.rows - refused.size,
    }
  })
  return { ...batch, parts }
}

describe('ObjectSink (parquet) on s3rver: rows refused for a value', () => {
  it('refuses every bad row of every part and creates nothing; without them the rest lands', async () => {
    const store = new S3Store(fixture.config({ prefix: 'refused', format: 'parquet' }), {
      createsOnce: false,
    })
    const sink = new ObjectSink(store, {
      encoding: { format: 'parquet', compression: 'zstd' },
      manifest: true,
      pipeline: 'bikehire',
    })
    const batch = makeBatch({
      pipeline: 'bikehire',
      seq: 3,
      parts: [
        rawPart(schema, 'csv', '1,2024-01-01T00:00:00Z\n2,yesterday\n3,\n', 3),
        rawPart(
          schema,
          'jsonl',
          '{"id":4}\n\n{"id":"5"}\n{"id":6,"seen":"2024-01-01T24:00:00Z"}\n{"id":7}',
          4,
        ),
      ],
    })
    await sink.prepare(schema)
    const outcome = await sink.write(batch)
    expect(outcome).toEqual({
      status: 'refused',
      rows: [
        {
          part: 0,
          row: 1,
          code: BAD_RECORD,
          error: expect.stringContaining('field "seen": "yesterday" is not'),
        },
        {
          part: 1,
          row: 1,
          code: BAD_RECORD,
          error: expect.stringContaining('field "id": "5" is not a long'),
        },
        {
          part: 1,
          row: 2,
          code: BAD_RECORD,
          error: expect.stringContaining('"2024-01-01T24:00:00Z" is not'),
        },
      ],
    })
    expect(await store.list('')).toEqual([])

    if (outcome.status !== 'refused') throw new Error('expected refused')
    expect(await sink.write(withoutRefused(batch, outcome.rows))).toEqual({ status: 'landed', rows: 4 })
    expect((await objectRows(store, 'rentals')).map((row) => row.id)).toEqual([1n, 3n, 4n, 7n])
    expect(await store.list('_manifests/')).toEqual(['_manifests/bikehire/epoch-1/000000000003.json'])
    await sink.close()
  })
})
