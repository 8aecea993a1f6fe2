/**
 * Created once, never replaced: against the fake S3 of @skippr/test-servers, which honours
 * `If-None-Match: *` as AWS does (s3rver ignores it) and can store an object and then drop the
 * response, like a write that landed while the network failed.
 */
import { CreateMultipartUploadCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import type { ObjectStoreHarness } from '@skippr/conformance'
import { allTypesSchema, makeBatch, objectStoreSuite, trickyRows } from '@skippr/conformance'
import { OBJECT_CONFLICT, ObjectSink, objectKey } from '@skippr/object-sink'
import type { ConditionalS3 } from '@skippr/test-servers'
import { startConditionalS3 } from '@skippr/test-servers'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3Store, s3SinkConfig } from '../src/index.js'

let fake: ConditionalS3
beforeAll(async () => {
  fake = await startConditionalS3()
})
afterAll(() => fake.stop())

function store(prefix: string, fields: Record<string, unknown> = {}): S3Store {
  return new S3Store(
    v.parse(s3SinkConfig, {
      ...fields,
      bucket: fake.bucket,
      endpoint: fake.endpoint,
      region: fake.region,
      access_key_id: fake.accessKeyId,
      secret_access_key: fake.secretAccessKey,
      prefix,
      format: 'jsonl',
    }),
  )
}

const harness: ObjectStoreHarness = {
  name: 's3 (conditional fake)',
  createStore: async () => store('contract'),
}
objectStoreSuite(harness)

describe('S3 sink: created once', () => {
  const schema = allTypesSchema('orders')
  const rows = trickyRows()
  const batchOf = (pipeline: string, parts = 1) =>
    makeBatch({
      pipeline,
      seq: 3,
      parts: Array.from({ length: parts }, (_, i) => ({
        schema,
        format: 'jsonl' as const,
        rows: rows.slice(i * 2, i * 2 + 2),
      })),
    })
  const sinkAt = (prefix: string, manifest = false, fields: Record<string, unknown> = {}) =>
    new ObjectSink(store(prefix, fields), {
      encoding: { format: 'jsonl', compression: 'none' },
      manifest,
      pipeline: 'p',
    })
  const keysUnder = (prefix: string) =>
    [...fake.objects().keys()].filter((key) => key.startsWith(`${prefix}/`)).sort()

  it('a write whose response was lost is found on retry by its checksum: already landed, one object', async () => {
    const sink = sinkAt('lost')
    await sink.prepare(schema)
    fake.dropNextResponses(1)
    expect(await sink.write(batchOf('lost'))).toEqual({ status: 'already-landed' })
    expect(keysUnder('lost')).toEqual([`lost/${objectKey('orders', batchOf('lost').id, 0, 'jsonl')}`])
    await sink.close()
  })

  it('a batch written again is already landed and its objects and manifest are unchanged', async () => {
    const sink = sinkAt('again', true)
    await sink.prepare(schema)
    expect(await sink.write(batchOf('again', 2))).toEqual({ status: 'landed', rows: 4 })
    const before = fake.objects()
    expect(await sink.write(batchOf('again', 2))).toEqual({ status: 'already-landed' })
    const after = fake.objects()
    expect(keysUnder('again')).toHaveLength(3)
    for (const key of keysUnder('again'))
      expect(after.get(key)?.lastModified).toEqual(before.get(key)?.lastModified)
    await sink.close()
  })

  it('a batch cut short by a crash lands its missing objects on retry', async () => {
    const sink = sinkAt('partial')
    await sink.prepare(schema)
    expect(await sink.write(batchOf('partial', 1))).toEqual({ status: 'landed', rows: 2 })
    expect(await sink.write(batchOf('partial', 2))).toEqual({ status: 'landed', rows: 4 })
    expect(keysUnder('partial')).toHaveLength(2)
    await sink.close()
  })

  it("another writer's object at a batch's key is never replaced: fatal, naming the object", async () => {
    const batch = batchOf('conflict')
    const key = `conflict/${objectKey('orders', batch.id, 0, 'jsonl')}`
    const client = new S3Client({
      endpoint: fake.endpoint,
      region: fake.region,
      forcePathStyle: true,
      credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: fake.secretAccessKey },
    })
    await client.send(new PutObjectCommand({ Bucket: fake.bucket, Key: key, Body: '{"someone":"else"}\n' }))
    client.destroy()
    const sink = sinkAt('conflict')
    await sink.prepare(schema)
    const outcome = await sink.write(batch)
    expect(outcome.status).toBe('fatal')
    if (outcome.status !== 'fatal') return
    expect(outcome.error).toMatchObject({ code: OBJECT_CONFLICT })
    expect(outcome.error.message).toContain(
      `s3://${fake.bucket}/${key} already exists with other contents (no skippr checksum`,
    )
    expect(fake.objects().get(key)?.body.toString()).toBe('{"someone":"else"}\n')
    await sink.close()
  })

  it('an object above the part size is one multipart upload, created once on completion', async () => {
    const sink = sinkAt('large', false, { part_size_mib: 5 })
    const big = {
      namespace: 'big',
      fields: [
        { name: 'id', type: 'long' as const },
        { name: 'pad', type: 'string' as const },
      ],
    }
    const pad = 'y'.repeat(1000)
    const batch = makeBatch({
      pipeline: 'p',
      seq: 1,
      parts: [
        { schema: big, format: 'jsonl', rows: Array.from({ length: 12_000 }, (_, id) => ({ id, pad })) },
      ],
    })
    await sink.prepare(big)
    expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 12_000 })
    const [key] = keysUnder('large')
    const first = fake.objects().get(key as string)
    expect(first?.etag).toMatch(/-3"$/)
    expect(await sink.write(batch)).toEqual({ status: 'already-landed' })
    expect(fake.objects().get(key as string)?.lastModified).toEqual(first?.lastModified)
    expect(fake.uploads()).toEqual([])
    await sink.close()
  })

  it("aborts this pipeline's unfinished multipart uploads at start, and no other pipeline's", async () => {
    const client = new S3Client({
      endpoint: fake.endpoint,
      region: fake.region,
      forcePathStyle: true,
      credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: fake.secretAccessKey },
    })
    const begin = (Key: string) => client.send(new CreateMultipartUploadCommand({ Bucket: fake.bucket, Key }))
    await begin('orphans/orders/p/e1/000000000007-0.jsonl')
    await begin('orphans/refunds/p/e1/000000000008-0.jsonl')
    await begin('orphans/orders/other-pipeline/e1/000000000007-0.jsonl')
    await begin('elsewhere/orders/p/e1/000000000007-0.jsonl')
    client.destroy()
    const sink = sinkAt('orphans')
    await sink.prepare(schema)
    expect(
      fake
        .uploads()
        .map((u) => u.key)
        .sort(),
    ).toEqual([
      'elsewhere/orders/p/e1/000000000007-0.jsonl',
      'orphans/orders/other-pipeline/e1/000000000007-0.jsonl',
    ])
    await sink.close()
  })
})
