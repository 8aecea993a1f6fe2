/**
 * What the S3 WAL adds to the backend contract, on a real s3rver: a WAL reopened on a new host
 * (a fresh data dir) has every committed batch; a writer that lost the log to a newer one can
 * publish nothing more; landed frames leave the bucket; and its failures are one clear line.
 */
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import type { BackendOptions, WalBatch } from '@skippr/wal'
import { openWal } from '@skippr/wal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { s3Wal, WAL_FENCED, WAL_S3_BUCKET_MISSING } from '../src/index.js'
import { type S3WalWorld, startS3WalWorld } from './support.js'

let world: S3WalWorld
beforeAll(async () => {
  world = await startS3WalWorld()
})
afterAll(async () => world?.stop())

let pipelines = 0
const newPipeline = () => `p${++pipelines}`

function backendOptions(pipeline: string, dataDir: string, maxTotalBytes = 1 << 30): BackendOptions {
  return {
    pipeline,
    dataDir,
    bytesPerFile: 1 << 20,
    maxTotalBytes,
    keepFreeBytes: 0,
    keepFreeBatches: 0,
    logger: undefined,
  }
}

async function objectKeys(prefix: string): Promise<string[]> {
  const client = new S3Client({
    endpoint: world.server.endpoint,
    region: world.server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: world.server.accessKeyId, secretAccessKey: world.server.secretAccessKey },
  })
  const listed = await client.send(new ListObjectsV2Command({ Bucket: world.bucket, Prefix: prefix }))
  client.destroy()
  return (listed.Contents ?? []).map((item) => item.Key ?? '')
}

const bytes = (text: string) => new TextEncoder().encode(text)
const batch = (k: number) => ({
  offset: { k },
  parts: [
    {
      namespace: 'rentals',
      schemaVersion: 1,
      format: 'jsonl' as const,
      rows: 1,
      body: bytes(`{"k":${k}}\n`),
    },
  ],
})

async function pending(wal: { pending(): AsyncIterable<WalBatch> }): Promise<number[]> {
  const ks: number[] = []
  for await (const b of wal.pending()) ks.push((b.offset as { k: number }).k)
  return ks
}

describe('S3 WAL', () => {
  it('has every committed batch on a new host, with the same identities, and resumes after them', async () => {
    const pipeline = newPipeline()
    const wal = world.wal('hosts')
    let saved: unknown
    const positions = {
      load: async () => saved as never,
      async save(offset: unknown) {
        saved = offset
      },
    }
    const first = await openWal({ pipeline, dataDir: await world.dataDir(), backend: wal, positions })
    const ids = []
    for (let k = 1; k <= 5; k++) ids.push(await first.commit(batch(k)))
    await first.markLanded(ids[0]!)
    await first.markLanded(ids[1]!)
    // The host is gone: nothing of its data dir is used again, and it is not closed.
    const second = await openWal({ pipeline, dataDir: await world.dataDir(), backend: wal, positions })
    expect(await pending(second)).toEqual([3, 4, 5])
    const again = []
    for await (const b of second.pending()) again.push(b.id)
    expect(again).toEqual(ids.slice(2))
    expect(await second.resumeOffset()).toEqual({ k: 5 })
    await second.close()
    await first.close().catch(() => {})
  })

  it('fences out a writer that lost the log: what it stores after is never read, and it stops', async () => {
    const pipeline = newPipeline()
    const wal = world.wal('fence')
    const old = await wal.open(backendOptions(pipeline, await world.dataDir()))
    for (const text of ['a', 'b', 'c']) await old.append(bytes(text))
    const current = await wal.open(backendOptions(pipeline, await world.dataDir()))
    expect(current.publishedFsn).toBe(3n)

    // The old writer, paused past its lease, wakes and appends: the PUT succeeds, unseen.
    expect(await old.append(bytes('zombie'))).toBe(4n)
    expect(await current.append(bytes('d'))).toBe(4n)
    const texts: string[] = []
    for await (const frame of current.read(1n)) texts.push(new TextDecoder().decode(frame.payload))
    expect(texts).toEqual(['a', 'b', 'c', 'd'])
    const view = await (await wal.openSnapshot({ pipeline, dataDir: '' })).openLog()
    const seen: string[] = []
    for await (const frame of view.frames()) seen.push(new TextDecoder().decode(frame.payload))
    expect(seen).toEqual(['a', 'b', 'c', 'd'])

    // Its first write of the record is refused, and then everything is.
    await expect(old.ack(2n)).rejects.toMatchObject({ code: WAL_FENCED })
    await expect(old.append(bytes('more'))).rejects.toMatchObject({ code: WAL_FENCED })
    await expect(old.writeMeta({ epoch: 'x', resetting: false })).rejects.toMatchObject({ code: WAL_FENCED })
    await old.close()

    // The current writer lands everything; a later open removes the stray object with the rest.
    await current.ack(4n)
    await current.close()
    const next = await wal.open(backendOptions(pipeline, await world.dataDir()))
    await next.close()
    expect(await objectKeys(`fence/wal/`)).not.toContainEqual(expect.stringContaining(`/p${pipelines}/`))
  })

  it('fences out, not calls corrupt, a writer whose frames the one that took over landed and deleted', async () => {
    const pipeline = newPipeline()
    const wal = world.wal('fence-read')
    const old = await wal.open(backendOptions(pipeline, await world.dataDir()))
    for (const text of ['a', 'b', 'c']) await old.append(bytes(text))
    const current = await wal.open(backendOptions(pipeline, await world.dataDir()))
    await current.ack(3n)
    await current.close()
    // The paused writer wakes and replays what it published: those objects are gone.
    const reading = (async () => {
      for await (const _ of old.read(1n)) {
      }
    })()
    await expect(reading).rejects.toMatchObject({ code: WAL_FENCED })
    await expect(old.append(bytes('more'))).rejects.toMatchObject({ code: WAL_FENCED })
    await old.close()
  })

  it('deletes landed frames from the bucket, and keeps the pending ones', async () => {
    const pipeline = newPipeline()
    const wal = world.wal('trim')
    const log = await wal.open(backendOptions(pipeline, await world.dataDir()))
    for (let i = 0; i < 6; i++) await log.append(bytes(`f${i}`))
    await log.ack(4n)
    await log.close()
    const left = await objectKeys(`trim/wal/default/${pipeline}/`)
    expect(left.map((key) => key.split('/').at(-1))).toEqual(['00000000000000000005', '00000000000000000006'])
  })

  it('stops taking frames at WAL_MAX_TOTAL_BYTES until landed ones free room', async () => {
    const pipeline = newPipeline()
    const log = await world.wal('cap').open(backendOptions(pipeline, await world.dataDir(), 10))
    await log.append(bytes('12345678'))
    await expect(log.append(bytes('123'))).rejects.toMatchObject({ code: 'SF_BACKPRESSURE' })
    await log.ack(1n)
    expect(await log.append(bytes('123'))).toBe(2n)
    await log.close()
  })

  it('names a missing bucket in one line', async () => {
    const s3Missing = s3Wal({
      bucket: 'no-such-bucket/wal',
      workspace: 'default',
      endpoint: world.server.endpoint,
      region: world.server.region,
      credentials: { accessKeyId: world.server.accessKeyId, secretAccessKey: world.server.secretAccessKey },
      records: (p) => world.store.pipeline(p).walRecord(),
    })
    await expect(s3Missing.open(backendOptions(newPipeline(), await world.dataDir()))).rejects.toMatchObject({
      code: WAL_S3_BUCKET_MISSING,
      message: expect.stringMatching(/^WAL s3:\/\/no-such-bucket\/wal: the bucket does not exist; create it/),
    })
  })
})
