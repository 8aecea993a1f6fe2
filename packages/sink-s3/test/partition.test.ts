/**
 * `partition_by` on S3: a batch split by a row field lands as one object per value under Hive-style
 * levels from the commit time the WAL stored (never the clock of the write), the objects together
 * hold the batch's rows exactly once and byte for byte, and a retry addresses the same keys.
 */
import { CreateMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3'
import { allTypesSchema, makeBatch, objectRows, rawPart, trickyRows } from '@skippr/conformance'
import type { SinkBatch } from '@skippr/connector-api'
import { ObjectSink, objectSinkOptions, PARTITION_FIELD_MISSING, partitionValue } from '@skippr/object-sink'
import type { ConditionalS3 } from '@skippr/test-servers'
import { startConditionalS3 } from '@skippr/test-servers'
import * as v from 'valibot'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { S3Store, s3SinkConfig } from '../src/index.js'
import { s3Fixture } from './helpers.js'

const TEMPLATE = 'dt={commit_time:%Y-%m-%d}/hour={commit_time:%H}/name={field:name}'
/** Long before the test runs: a key from the clock of the write could not show this date. */
const COMMITTED_AT = Date.UTC(2024, 1, 29, 23, 30)
const schema = allTypesSchema('orders')
const rows = trickyRows()

/** Two parts, one JSON lines and one CSV; JSON-lines values a double could not hold, and names that need escaping. */
function batch(): SinkBatch {
  const jsonl = [
    '{"id":9223372036854775807,"name":"a/b","price":0.10000000000000000555,"doc":{"k" : [1, 2]}}',
    '{"id":-9223372036854775808,"name":"..","price":1.5e300}',
    '{"id":7,"name":"a/b","qty":7}',
    '{"id":8,"name":null}',
    '{"id":9,"name":""}',
    '{"id":10}',
  ]
  const base = makeBatch({
    pipeline: 'orders-sync',
    epoch: 'e1',
    seq: 42,
    parts: [rawPart(schema, 'jsonl', `${jsonl.join('\n')}\n`, jsonl.length), { schema, format: 'csv', rows }],
  })
  return { ...base, committedAt: COMMITTED_AT }
}

const lines = (bytes: Uint8Array) => new TextDecoder().decode(bytes).split('\n').filter(Boolean)

describe('partition_by on s3rver', () => {
  const fixture = s3Fixture()
  beforeAll(() => fixture.start())
  afterAll(() => fixture.stop())
  afterEach(() => vi.useRealTimers())

  function sinkAt(prefix: string, fields: Record<string, unknown> = {}) {
    const config = fixture.config({ prefix, manifest: true, ...fields })
    const store = new S3Store(config, { createsOnce: false })
    return { store, sink: new ObjectSink(store, objectSinkOptions(config, { pipeline: 'orders-sync' })) }
  }

  it('lands one object per value under levels from the WAL commit time; together they hold every row once, as committed', async () => {
    const { store, sink } = sinkAt('split', { partition_by: TEMPLATE })
    await sink.prepare(schema)
    expect(await sink.write(batch())).toEqual({ status: 'landed', rows: 6 + rows.length })
    const keys = await store.list('')
    const level = 'orders/dt=2024-02-29/hour=23'
    const file = 'orders-sync/e1/000000000042'
    const objects = [
      `${level}/name=%2E./${file}-0-1.jsonl`,
      `${level}/name=__HIVE_DEFAULT_PARTITION__/${file}-0-2.jsonl`,
      `${level}/name=a%2Fb/${file}-0-0.jsonl`,
      // Part 1's groups, in the order of their first row: NULL and '' share the default partition.
      ...[...new Set(rows.map((row) => partitionValue((row.name as string | null) ?? null)))].map(
        (name, group) => `${level}/name=${name}/${file}-1-${group}.jsonl`,
      ),
    ]
    expect(keys).toEqual(['_manifests/orders-sync/e1/000000000042.json', ...objects].sort())
    // Part 0 is JSON lines already: each object holds its rows' lines as committed, in order.
    const part0 = batch().parts[0]!
    expect(lines(await store.read(`${level}/name=a%2Fb/${file}-0-0.jsonl`))).toEqual([
      lines(part0.body)[0],
      lines(part0.body)[2],
    ])
    expect(lines(await store.read(`${level}/name=__HIVE_DEFAULT_PARTITION__/${file}-0-2.jsonl`))).toEqual(
      lines(part0.body).slice(3),
    )
    const split = await Promise.all(objects.filter((k) => k.includes('-0-')).map((k) => store.read(k)))
    expect(split.flatMap(lines).sort()).toEqual(lines(part0.body).sort())
    // Every row once, each value as the unsplit batch lands it.
    const whole = sinkAt('whole')
    await whole.sink.prepare(schema)
    expect((await whole.sink.write(batch())).status).toBe('landed')
    const byId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a.id).localeCompare(String(b.id))
    expect((await objectRows(store, 'orders')).sort(byId)).toEqual(
      (await objectRows(whole.store, 'orders')).sort(byId),
    )
    const manifest = JSON.parse(
      new TextDecoder().decode(await store.read('_manifests/orders-sync/e1/000000000042.json')),
    )
    expect(manifest.objects.map((o: { key: string }) => o.key).sort()).toEqual([...objects].sort())
    expect(manifest.objects.reduce((sum: number, o: { rows: number }) => sum + o.rows, 0)).toBe(
      6 + rows.length,
    )
    await Promise.all([sink.close(), whole.sink.close()])
  })

  it('a retry days later, with a later clock, writes the same bytes at the same keys and no other object', async () => {
    const { store, sink } = sinkAt('retry', { partition_by: TEMPLATE, format: 'parquet' })
    await sink.prepare(schema)
    expect((await sink.write(batch())).status).toBe('landed')
    const keys = await store.list('')
    const sums = await Promise.all(keys.map(async (key) => (await store.stat(key))?.sha256))
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3 * 86_400_000 })
    const again = sinkAt('retry', { partition_by: TEMPLATE, format: 'parquet' })
    await again.sink.prepare(schema)
    expect((await again.sink.write(batch())).status).toBe('landed')
    expect(await store.list('')).toEqual(keys)
    expect(await Promise.all(keys.map(async (key) => (await store.stat(key))?.sha256))).toEqual(sums)
    expect(
      keys.every((key) => key.startsWith('_manifests/') || key.includes('/dt=2024-02-29/hour=23/')),
    ).toBe(true)
    await Promise.all([sink.close(), again.sink.close()])
  })

  it('a Parquet value a column cannot hold refuses its row by its record in the whole part, and nothing lands', async () => {
    const { store, sink } = sinkAt('refused', { partition_by: TEMPLATE, format: 'parquet' })
    const body = '{"id":1,"name":"x"}\n{"id":2,"name":"y"}\n{"id":3,"name":"x","qty":"abc"}\n'
    const refusing = {
      ...makeBatch({ pipeline: 'orders-sync', seq: 5, parts: [rawPart(schema, 'jsonl', body, 3)] }),
      committedAt: COMMITTED_AT,
    }
    await sink.prepare(schema)
    const outcome = await sink.write(refusing)
    expect(outcome).toMatchObject({ status: 'refused', rows: [{ part: 0, row: 2 }] })
    expect(await store.list('')).toEqual([])
    await sink.close()
  })

  it('a field the namespace does not have: one line naming it, for good, and no object', async () => {
    const { store, sink } = sinkAt('missing', { partition_by: 'region={field:region}' })
    await expect(sink.prepare(schema)).rejects.toThrow(
      'partition_by "region={field:region}" takes {field:region}, which namespace orders does not have',
    )
    const outcome = await sink.write(batch())
    expect(outcome).toMatchObject({ status: 'fatal', error: { code: PARTITION_FIELD_MISSING } })
    expect(await store.list('')).toEqual([])
    await sink.close()
  })

  it('refuses a template with an unknown placeholder when the config is read', () => {
    const parsed = v.safeParse(s3SinkConfig, { bucket: 'b', format: 'jsonl', partition_by: 'dt={clock:%Y}' })
    expect(parsed.success).toBe(false)
    expect(parsed.issues?.[0]?.message).toContain('unknown placeholder {clock:%Y}')
  })
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
      partition_by: TEMPLATE,
    })
    return new ObjectSink(new S3Store(config), objectSinkOptions(config, { pipeline: 'orders-sync' }))
  }
  const keysUnder = (prefix: string) =>
    [...fake.objects().keys()].filter((k) => k.startsWith(`${prefix}/`)).sort()

  it('a batch written again is already landed, with no new object and none rewritten', async () => {
    const sink = sinkAt('again')
    await sink.prepare(schema)
    expect((await sink.write(batch())).status).toBe('landed')
    const before = fake.objects()
    expect(await sink.write(batch())).toEqual({ status: 'already-landed' })
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
