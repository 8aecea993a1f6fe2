import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3'
import * as clientS3 from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type S3Server, startS3rver } from '../src/index.js'
import { pidsWithArgument, refusesConnections } from './processes.js'

const { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } = clientS3
const BUCKET = 'skippr-test'

describe('s3rver', () => {
  let s3rver: S3Server
  let client: S3Client
  const newClient = (config: S3ClientConfig = {}) =>
    new clientS3.S3Client({
      endpoint: s3rver.endpoint,
      region: s3rver.region,
      credentials: { accessKeyId: s3rver.accessKeyId, secretAccessKey: s3rver.secretAccessKey },
      forcePathStyle: true,
      ...config,
    })
  beforeAll(async () => {
    s3rver = await startS3rver()
    client = newClient()
    await s3rver.createBucket(BUCKET)
  }, 60_000)
  afterAll(async () => {
    client?.destroy()
    await s3rver?.stop()
  })

  it('listens on 127.0.0.1 with its built-in credentials', () => {
    expect(s3rver.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect([s3rver.accessKeyId, s3rver.secretAccessKey]).toEqual(['S3RVER', 'S3RVER'])
  })

  it('stores, lists and returns objects with metadata through the AWS SDK', async () => {
    await client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'a/1.json', Body: '{"n":1}', Metadata: { rows: '1' } }),
    )
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'b/2.json', Body: '{"n":2}' }))
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'a/' }))
    expect(listed.Contents?.map((object) => object.Key)).toEqual(['a/1.json'])
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'a/1.json' }))
    expect(head.Metadata).toEqual({ rows: '1' })
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'a/1.json' }))
    expect(await got.Body?.transformToString()).toBe('{"n":1}')
    expect(existsSync(join(s3rver.dir, 'data', BUCKET))).toBe(true)
  })

  it('stores nothing of a PUT whose client dies before the body ends, as S3 does (s3rver alone kept a torn object)', async () => {
    const plain = newClient({ requestChecksumCalculation: 'WHEN_REQUIRED' })
    try {
      const aborted = new AbortController()
      // Half of the declared bytes, then the client goes, as a SIGKILLed writer's PUT does.
      const body = new Readable({ read() {} })
      body.push(Buffer.alloc(4096, 1))
      const put = plain.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'torn', Body: body, ContentLength: 8192 }),
        { abortSignal: aborted.signal },
      )
      await new Promise((resolve) => setTimeout(resolve, 500))
      aborted.abort()
      await expect(put).rejects.toThrow()
      await new Promise((resolve) => setTimeout(resolve, 500))
      await expect(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'torn' }))).rejects.toMatchObject(
        {
          name: 'NotFound',
        },
      )
      const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'torn' }))
      expect(listed.Contents ?? []).toEqual([])
    } finally {
      plain.destroy()
    }
  })

  it('stores a streamed upload intact when the SDK adds checksums only where required', async () => {
    // With its default checksums the SDK sends a stream aws-chunked, and s3rver stores the framing.
    const plain = newClient({ requestChecksumCalculation: 'WHEN_REQUIRED' })
    try {
      const body = Readable.from([Buffer.from('first,'), Buffer.from('second')])
      await plain.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'streamed', Body: body, ContentLength: 12 }),
      )
      const got = await plain.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'streamed' }))
      expect(await got.Body?.transformToString()).toBe('first,second')
    } finally {
      plain.destroy()
    }
  })

  it('refuses an unknown access key id', async () => {
    const stranger = newClient({ credentials: { accessKeyId: 'STRANGER', secretAccessKey: 'S3RVER' } })
    try {
      await expect(
        stranger.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'x', Body: 'x' })),
      ).rejects.toMatchObject({ name: 'InvalidAccessKeyId' })
    } finally {
      stranger.destroy()
    }
  })

  it('says why creating a bucket failed, in one line', async () => {
    await expect(s3rver.createBucket(BUCKET)).rejects.toThrow(
      /^S3rver: creating bucket skippr-test failed: 409 BucketAlreadyExists: [^\n]+$/,
    )
  })

  it('leaves no process, port or dir behind after stop', async () => {
    const dataDir = join(s3rver.dir, 'data')
    expect(pidsWithArgument(dataDir)).toHaveLength(1)
    client.destroy()
    await s3rver.stop()
    expect(await refusesConnections(Number(new URL(s3rver.endpoint).port))).toBe(true)
    expect(pidsWithArgument(dataDir)).toEqual([])
    expect(existsSync(s3rver.dir)).toBe(false)
    await s3rver.stop()
  })
})
