/**
 * The AzureBlob sink as the runner makes it (`sink.create`), against Azurite: the blobs a batch
 * produces, its manifest, a retry after a crash, a foreign blob at a batch's key, an empty part,
 * and names that need encoding.
 */

import { allTypesSchema, makeBatch, objectRows, rawPart, trickyRows } from '@skippr/conformance'
import type { Sink, SinkBatch } from '@skippr/connector-api'
import { objectKey } from '@skippr/object-sink'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { AzureBlobStore, sink } from '../src/index.js'
import { azureFixture, contextFor } from './helpers.js'

const fixture = azureFixture()
beforeAll(() => fixture.start())
afterAll(() => fixture.stop())

const opened: Sink[] = []
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close()
})

/** A sink as the runner creates it, and a store on the same root to look at what it wrote. */
async function sinkAt(prefix: string, pipeline: string, fields: Record<string, unknown> = {}) {
  const config = fixture.config({ prefix, ...fields })
  const created = await sink.create(config, contextFor(pipeline))
  opened.push(created)
  return { sink: created, store: new AzureBlobStore(config) }
}

/** What each blob is (its ETag changes when it is rewritten), by key. */
async function etags(prefix: string): Promise<Record<string, string | undefined>> {
  const found: Record<string, string | undefined> = {}
  for await (const blob of fixture.containerClient().listBlobsFlat({ prefix }))
    found[blob.name] = blob.properties.etag
  return found
}

function ordersBatch(pipeline: string, seq: number): SinkBatch {
  const rows = trickyRows()
  return makeBatch({
    pipeline,
    epoch: 'e1',
    seq,
    parts: [
      { schema: allTypesSchema('orders/eu'), format: 'csv', rows: rows.slice(0, 2) },
      { schema: allTypesSchema('refunds'), format: 'jsonl', rows: rows.slice(2) },
    ],
  })
}

describe('AzureBlob sink on Azurite', () => {
  it('puts each part at <prefix>/<namespace>/<pipeline>/<epoch>/<seq>-<part>.<ext>, and a manifest listing them', async () => {
    const { sink, store } = await sinkAt('/raw/skippr/', 'orders-sync', {
      format: 'csv',
      compression: 'gzip',
      manifest: true,
    })
    const batch = ordersBatch('orders-sync', 42)
    await sink.prepare(allTypesSchema('orders/eu'))
    expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 5 })
    expect(Object.keys(await etags('raw/'))).toEqual([
      'raw/skippr/_manifests/orders-sync/e1/000000000042.json',
      'raw/skippr/orders%2Feu/orders-sync/e1/000000000042-0.csv.gz',
      'raw/skippr/refunds/orders-sync/e1/000000000042-1.csv.gz',
    ])
    const manifest = JSON.parse(
      new TextDecoder().decode(await store.read('_manifests/orders-sync/e1/000000000042.json')),
    )
    expect(manifest.batch).toBe('orders-sync/e1/000000000042')
    expect(manifest.objects.map((o: { key: string; rows: number }) => [o.key, o.rows])).toEqual([
      ['orders%2Feu/orders-sync/e1/000000000042-0.csv.gz', 2],
      ['refunds/orders-sync/e1/000000000042-1.csv.gz', 3],
    ])
    for (const entry of manifest.objects)
      expect(await store.stat(entry.key)).toEqual({ sha256: entry.sha256, bytes: entry.bytes })
    expect((await objectRows(store, 'refunds')).map((row) => row.id)).toEqual(['3', '4', '5'])
  })

  it('a retry after a crash between the create and the ack finds its own blobs and rewrites none', async () => {
    const fields = { manifest: true }
    const first = await sinkAt('retry', 'crashy', fields)
    const batch = ordersBatch('crashy', 7)
    await first.sink.prepare(allTypesSchema('orders/eu'))
    expect(await first.sink.write(batch)).toEqual({ status: 'landed', rows: 5 })
    const landed = await etags('retry/')
    expect(Object.keys(landed)).toHaveLength(3)
    // A new process, as after a crash before the runner recorded the batch as landed.
    const again = await sinkAt('retry', 'crashy', fields)
    await again.sink.prepare(allTypesSchema('orders/eu'))
    expect(await again.sink.write(batch)).toEqual({ status: 'already-landed' })
    expect(await etags('retry/')).toEqual(landed)
    // A crash after the parts and before the manifest: the retry adds only the manifest.
    const manifest = 'retry/_manifests/crashy/e1/000000000007.json'
    await fixture.containerClient().getBlockBlobClient(manifest).delete()
    expect(await again.sink.write(batch)).toEqual({ status: 'landed', rows: 5 })
    const after = await etags('retry/')
    expect(Object.keys(after)).toEqual(Object.keys(landed))
    expect({ ...after, [manifest]: undefined }).toEqual({ ...landed, [manifest]: undefined })
  })

  it("a blob someone else wrote at a batch's key is never replaced: fatal SKIPPR_OBJECT_CONFLICT naming its location", async () => {
    const { sink } = await sinkAt('conflict', 'taken')
    const batch = ordersBatch('taken', 3)
    const key = objectKey('orders/eu', batch.id, 0, 'jsonl')
    const foreign = fixture.containerClient().getBlockBlobClient(`conflict/${key}`)
    await foreign.upload('not this batch\n', 15)
    await sink.prepare(allTypesSchema('orders/eu'))
    const outcome = await sink.write(batch)
    expect(outcome.status).toBe('fatal')
    const error = (outcome as { error: Error & { code?: string } }).error
    expect(error.code).toBe('SKIPPR_OBJECT_CONFLICT')
    expect(error.message).toContain(
      `azure://devstoreaccount1/${fixture.container}/conflict/${key} already exists`,
    )
    expect(error.message).not.toContain('\n')
    expect((await foreign.downloadToBuffer()).toString()).toBe('not this batch\n')
  })

  it('an empty batch part is an empty blob', async () => {
    const { sink, store } = await sinkAt('empty', 'quiet')
    const schema = allTypesSchema('orders')
    const batch = makeBatch({ pipeline: 'quiet', seq: 1, parts: [rawPart(schema, 'jsonl', '', 0)] })
    await sink.prepare(schema)
    expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 0 })
    expect(await store.list('')).toEqual(['orders/quiet/epoch-1/000000000001-0.jsonl'])
    expect((await store.stat('orders/quiet/epoch-1/000000000001-0.jsonl'))?.bytes).toBe(0)
    expect(await objectRows(store, 'orders')).toEqual([])
  })

  it('names with /, % and unicode stay one key segment each, and Azure stores them as written', async () => {
    const namespace = 'a/b %41 ünï €'
    const pipeline = 'pipe/é%'
    const { sink, store } = await sinkAt('names', pipeline)
    const schema = allTypesSchema(namespace)
    const rows = trickyRows()
    await sink.prepare(schema)
    const batch = makeBatch({ pipeline, epoch: 'ep/1', seq: 9, parts: [{ schema, format: 'jsonl', rows }] })
    expect(await sink.write(batch)).toEqual({ status: 'landed', rows: rows.length })
    const key = 'a%2Fb %2541 ünï €/pipe%2Fé%25/ep%2F1/000000000009-0.jsonl'
    expect(await store.list('')).toEqual([key])
    expect(Object.keys(await etags('names/'))).toEqual([`names/${key}`])
    expect((await objectRows(store, namespace)).map((row) => row.name)).toEqual(rows.map((row) => row.name))
  })
})
