/**
 * `partition_by` on S3: the shared suite against s3rver (one object per value under levels from
 * the WAL commit time, every row once and byte for byte, a retry days later at the same keys), and
 * where objects are created once (the conditional fake): a batch written again is already landed,
 * and cleanup finds this pipeline's unfinished uploads under the partition levels.
 */
import { CreateMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3'
import { allTypesSchema, PARTITION_TEMPLATE, partitionedBatch, partitionSuite } from '@skippr/conformance'
import { ObjectSink, objectSinkOptions } from '@skippr/object-sink'
import type { ConditionalS3 } from '@skippr/test-servers'
import { startConditionalS3 } from '@skippr/test-servers'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3Store, s3SinkConfig } from '../src/index.js'
import { s3Fixture } from './helpers.js'

const schema = allTypesSchema('orders')

const fixture = s3Fixture()
/** s3rver ignores `If-None-Match`: its stores rewrite an existing key. */
partitionSuite({
  name: 's3 (s3rver)',
  setup: () => fixture.start(),
  sinkAt: async (prefix, fields) => {
    const config = fixture.config({ prefix, ...fields })
    const sink = new ObjectSink(
      new S3Store(config, { createsOnce: false }),
      objectSinkOptions(config, { pipeline: 'orders-sync' }),
    )
    return { sink, store: new S3Store(config, { createsOnce: false }) }
  },
  cleanup: () => fixture.stop(),
})

it('refuses a template with an unknown placeholder when the config is read', () => {
  const parsed = v.safeParse(s3SinkConfig, { bucket: 'b', format: 'jsonl', partition_by: 'dt={clock:%Y}' })
  expect(parsed.success).toBe(false)
  expect(parsed.issues?.[0]?.message).toContain('unknown placeholder {clock:%Y}')
})

describe('partition_by where objects are created once (conditional fake)', () => {
  let fake: ConditionalS3
  beforeAll(async () => {
    fake = await startConditionalS3()
  })
  afterAll(() => fake.stop())

  function sinkAt(prefix: string) {
    const config = v.parse(s3SinkConfig, {
      bucket: fake.bucket,
      endpoint: fake.endpoint,
      region: fake.region,
      access_key_id: fake.accessKeyId,
      secret_access_key: fake.secretAccessKey,
      prefix,
      format: 'jsonl',
      manifest: true,
      partition_by: PARTITION_TEMPLATE,
    })
    return new ObjectSink(new S3Store(config), objectSinkOptions(config, { pipeline: 'orders-sync' }))
  }
  const keysUnder = (prefix: string) =>
    [...fake.objects().keys()].filter((k) => k.startsWith(`${prefix}/`)).sort()

  it('a batch written again is already landed, with no new object and none rewritten', async () => {
    const sink = sinkAt('again')
    await sink.prepare(schema)
    expect((await sink.write(partitionedBatch())).status).toBe('landed')
    const before = fake.objects()
    expect(await sink.write(partitionedBatch())).toEqual({ status: 'already-landed' })
    expect(keysUnder('again')).toEqual([...before.keys()].filter((k) => k.startsWith('again/')).sort())
    for (const key of keysUnder('again'))
      expect(fake.objects().get(key)?.lastModified).toEqual(before.get(key)?.lastModified)
    await sink.close()
  })

  it("aborts this pipeline's unfinished uploads under the partition levels, and no other pipeline's", async () => {
    const client = new S3Client({
      endpoint: fake.endpoint,
      region: fake.region,
      forcePathStyle: true,
      credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: fake.secretAccessKey },
    })
    const begin = (Key: string) => client.send(new CreateMultipartUploadCommand({ Bucket: fake.bucket, Key }))
    await begin('orphans/orders/dt=2024-02-29/hour=23/name=x/orders-sync/e1/000000000007-0-0.jsonl')
    await begin('orphans/orders/dt=2024-02-29/hour=23/name=x/other/e1/000000000007-0-0.jsonl')
    // A value equal to the pipeline's name, one level up, is not the pipeline's level.
    await begin('orphans/orders/dt=2024-02-29/hour=23/orders-sync/other/e1/000000000007-0-0.jsonl')
    await begin('orphans/orders/other/e1/000000000007-0.jsonl')
    client.destroy()
    const sink = sinkAt('orphans')
    await sink.prepare(schema)
    expect(
      fake
        .uploads()
        .map((u) => u.key)
        .filter((k) => k.startsWith('orphans/'))
        .sort(),
    ).toEqual([
      'orphans/orders/dt=2024-02-29/hour=23/name=x/other/e1/000000000007-0-0.jsonl',
      'orphans/orders/dt=2024-02-29/hour=23/orders-sync/other/e1/000000000007-0-0.jsonl',
      'orphans/orders/other/e1/000000000007-0.jsonl',
    ])
    await sink.close()
  })
})
