/**
 * The S3 sink against s3rver: the keys a batch produces, manifests, and multipart uploads above
 * the part size.
 */
import { allTypesSchema, makeBatch, objectRows, trickyRows } from '@skippr/conformance'
import { ObjectSink } from '@skippr/object-sink'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3Store } from '../src/index.js'
import { s3Fixture } from './helpers.js'

const fixture = s3Fixture()
beforeAll(() => fixture.start())
afterAll(() => fixture.stop())

function sinkAt(prefix: string, fields: Record<string, unknown> = {}, manifest = false) {
  const config = fixture.config({ prefix, ...fields })
  const store = new S3Store(config, { createsOnce: false })
  const encoding = { format: config.format, compression: config.compression }
  return { store, sink: new ObjectSink(store, { encoding, manifest, pipeline: 'orders-sync' }) }
}

describe('S3 sink on s3rver', () => {
  it('puts each part at <prefix>/<namespace>/<pipeline>/<epoch>/<seq>-<part>.<ext>, and a manifest last', async () => {
    const { store, sink } = sinkAt('/raw/skippr/', { format: 'csv', compression: 'gzip' }, true)
    const orders = allTypesSchema('orders/eu')
    const refunds = allTypesSchema('refunds')
    const rows = trickyRows()
    const batch = makeBatch({
      pipeline: 'orders-sync',
      epoch: 'e1',
      seq: 42,
      parts: [
        { schema: orders, format: 'csv', rows: rows.slice(0, 2) },
        { schema: refunds, format: 'jsonl', rows: rows.slice(2) },
      ],
    })
    await sink.prepare(orders)
    expect(await sink.write(batch)).toEqual({ status: 'landed', rows: rows.length })
    expect(await store.list('')).toEqual([
      '_manifests/orders-sync/e1/000000000042.json',
      'orders%2Feu/orders-sync/e1/000000000042-0.csv.gz',
      'refunds/orders-sync/e1/000000000042-1.csv.gz',
    ])
    expect(store.location).toBe(`s3://${fixture.bucket}/raw/skippr`)
    const manifest = JSON.parse(
      new TextDecoder().decode(await store.read('_manifests/orders-sync/e1/000000000042.json')),
    )
    expect(manifest.batch).toBe('orders-sync/e1/000000000042')
    expect(manifest.objects.map((o: { key: string; rows: number }) => [o.key, o.rows])).toEqual([
      ['orders%2Feu/orders-sync/e1/000000000042-0.csv.gz', 2],
      ['refunds/orders-sync/e1/000000000042-1.csv.gz', rows.length - 2],
    ])
    for (const entry of manifest.objects) expect((await store.stat(entry.key))?.sha256).toBe(entry.sha256)
    await sink.close()
  })

  it('uploads a part larger than part_size_mib in parts, and the object holds every row', async () => {
    const { store, sink } = sinkAt('multipart', { part_size_mib: 5 })
    const schema = {
      namespace: 'big',
      fields: [
        { name: 'id', type: 'long' as const },
        { name: 'pad', type: 'string' as const },
      ],
    }
    const pad = 'x'.repeat(1000)
    const rows = Array.from({ length: 12_000 }, (_, id) => ({ id, pad }))
    await sink.prepare(schema)
    expect(
      await sink.write(
        makeBatch({ pipeline: 'orders-sync', seq: 1, parts: [{ schema, format: 'jsonl', rows }] }),
      ),
    ).toEqual({
      status: 'landed',
      rows: rows.length,
    })
    const [key] = await store.list('big/')
    const stat = await store.stat(key as string)
    expect(stat?.bytes).toBeGreaterThan(10 * 1024 * 1024)
    const landed = await objectRows(store, 'big')
    expect(landed.map((row) => row.id)).toEqual(rows.map((row) => row.id))
    await sink.close()
  })
})
