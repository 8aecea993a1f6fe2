import { Readable } from 'node:stream'
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3'
import * as clientS3 from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ConditionalS3, startConditionalS3 } from '../src/index.js'
import { refusesConnections } from './processes.js'

const {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
} = clientS3

/** S3's least size of a part that is not the last. */
const FIVE_MIB = 5 * 1024 * 1024

describe('the conditional fake S3', () => {
  let s3: ConditionalS3
  let client: S3Client
  const newClient = (config: S3ClientConfig = {}) =>
    new clientS3.S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      forcePathStyle: true,
      ...config,
    })
  const put = (
    Key: string,
    Body: string,
    extra: { IfNoneMatch?: string; Metadata?: Record<string, string> } = {},
  ) => client.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body, ...extra }))
  const text = async (Key: string) =>
    (await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key }))).Body?.transformToString()
  const startUpload = async (
    Key: string,
    extra: { Metadata?: Record<string, string>; ContentType?: string } = {},
  ) => (await client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key, ...extra }))).UploadId!
  const uploadPart = async (
    Key: string,
    UploadId: string,
    PartNumber: number,
    Body: Buffer | Readable,
    ContentLength?: number,
  ) => {
    const part = new UploadPartCommand({ Bucket: s3.bucket, Key, UploadId, PartNumber, Body, ContentLength })
    return { PartNumber, ETag: (await client.send(part)).ETag }
  }
  const completeUpload = (
    Key: string,
    UploadId: string,
    Parts: { PartNumber: number; ETag: string | undefined }[],
    extra: { IfNoneMatch?: string } = {},
  ) =>
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: s3.bucket,
        Key,
        UploadId,
        MultipartUpload: { Parts },
        ...extra,
      }),
    )
  const abortUpload = (Key: string, UploadId: string) =>
    client.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key, UploadId }))
  const uploadIds = () => s3.uploads().map((upload) => upload.uploadId)

  beforeAll(async () => {
    s3 = await startConditionalS3({ bucket: 'landing' })
    client = newClient()
  })
  afterAll(async () => {
    client?.destroy()
    await s3?.stop()
  })

  it('has the one bucket it was given, and no other', async () => {
    expect(s3.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    await expect(client.send(new HeadBucketCommand({ Bucket: 'landing' }))).resolves.toBeDefined()
    await expect(client.send(new HeadBucketCommand({ Bucket: 'elsewhere' }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 404 },
    })
    await expect(
      client.send(new PutObjectCommand({ Bucket: 'elsewhere', Key: 'k', Body: 'x' })),
    ).rejects.toMatchObject({ name: 'NoSuchBucket' })
  })

  it('writes with If-None-Match: * once, and answers 412 PreconditionFailed for a key that exists', async () => {
    await put('once.json', 'first', { IfNoneMatch: '*' })
    await expect(put('once.json', 'second', { IfNoneMatch: '*' })).rejects.toMatchObject({
      name: 'PreconditionFailed',
      $metadata: { httpStatusCode: 412 },
    })
    expect(await text('once.json')).toBe('first')
    await put('once.json', 'third')
    expect(await text('once.json')).toBe('third')
  })

  it('lets exactly one of many racing conditional writes win', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => put('race.json', `writer ${i}`, { IfNoneMatch: '*' })),
    )
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
    expect(results.filter((result) => result.status === 'rejected')).toHaveLength(7)
  })

  it('keeps x-amz-meta-* headers and answers HeadObject with them, or 404', async () => {
    await put('meta.json', '{"n":1}', { Metadata: { rows: '1', 'batch-id': 'b7' } })
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: 'meta.json' }))
    expect(head.Metadata).toEqual({ rows: '1', 'batch-id': 'b7' })
    expect(head.ContentLength).toBe(7)
    expect(s3.objects().get('meta.json')).toMatchObject({
      body: Buffer.from('{"n":1}'),
      metadata: head.Metadata,
    })
    await expect(
      client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: 'missing' })),
    ).rejects.toMatchObject({
      name: 'NotFound',
      $metadata: { httpStatusCode: 404 },
    })
    await expect(text('missing')).rejects.toMatchObject({ name: 'NoSuchKey' })
  })

  it('stores the bytes of a streamed upload, which the SDK sends aws-chunked with a checksum trailer', async () => {
    const body = Readable.from([Buffer.from('first,'), Buffer.from('second')])
    await client.send(
      new PutObjectCommand({ Bucket: s3.bucket, Key: 'streamed', Body: body, ContentLength: 12 }),
    )
    expect(s3.objects().get('streamed')?.body.toString()).toBe('first,second')
  })

  it('lists by prefix in key order, a page at a time, and deletes', async () => {
    for (const key of ['logs/b', 'logs/a', 'logs/c', 'other/a']) await put(key, key)
    const list = (ContinuationToken?: string) =>
      client.send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'logs/', MaxKeys: 2, ContinuationToken }),
      )
    const first = await list()
    expect(first.Contents?.map((object) => [object.Key, object.Size])).toEqual([
      ['logs/a', 6],
      ['logs/b', 6],
    ])
    expect(first.IsTruncated).toBe(true)
    const second = await list(first.NextContinuationToken)
    expect(second.Contents?.map((object) => object.Key)).toEqual(['logs/c'])
    expect(second.IsTruncated).toBe(false)
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: 'logs/b' }))
    expect((await list()).Contents?.map((object) => object.Key)).toEqual(['logs/a', 'logs/c'])
  })

  it('stores a put whose answer it drops, which the caller sees as a network error', async () => {
    const once = newClient({ maxAttempts: 1 })
    try {
      s3.dropNextResponses(1)
      await expect(
        once.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'dropped', Body: 'landed' })),
      ).rejects.toThrow()
      expect(s3.objects().get('dropped')?.body.toString()).toBe('landed')
      await once.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'answered', Body: 'x' }))
    } finally {
      once.destroy()
    }
  })

  it('answers the SDK retry of a dropped conditional put with 412: the first attempt landed', async () => {
    s3.dropNextResponses(1)
    await expect(put('retried', 'attempt', { IfNoneMatch: '*' })).rejects.toMatchObject({
      name: 'PreconditionFailed',
      $metadata: { attempts: 2 },
    })
    expect(s3.objects().get('retried')?.body.toString()).toBe('attempt')
  })

  it('completes a multipart upload into one object with the metadata it began with, and ends the upload', async () => {
    const first = Buffer.alloc(FIVE_MIB, 'a')
    const uploadId = await startUpload('big.jsonl', {
      Metadata: { rows: '2' },
      ContentType: 'application/x-ndjson',
    })
    expect(s3.uploads()).toContainEqual({ key: 'big.jsonl', uploadId })
    const parts = [
      await uploadPart('big.jsonl', uploadId, 1, first),
      // A stream, which the SDK sends aws-chunked with a checksum trailer.
      await uploadPart('big.jsonl', uploadId, 2, Readable.from([Buffer.from('tail')]), 4),
    ]
    const completed = await completeUpload('big.jsonl', uploadId, parts, { IfNoneMatch: '*' })
    expect(completed.ETag).toMatch(/^"[0-9a-f]{32}-2"$/)
    const stored = s3.objects().get('big.jsonl')
    // Buffer.equals: vitest compares a 5 MiB buffer element by element, which takes a minute.
    expect(stored?.body.equals(Buffer.concat([first, Buffer.from('tail')]))).toBe(true)
    expect(stored).toMatchObject({
      metadata: { rows: '2' },
      contentType: 'application/x-ndjson',
      etag: completed.ETag,
    })
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: 'big.jsonl' }))
    expect(head).toMatchObject({ ContentLength: FIVE_MIB + 4, Metadata: { rows: '2' } })
    expect(uploadIds()).not.toContain(uploadId)
  })

  it('answers a Complete with If-None-Match: * on a key that exists with 412, and keeps the upload open', async () => {
    await put('taken.jsonl', 'first')
    const uploadId = await startUpload('taken.jsonl')
    const parts = [await uploadPart('taken.jsonl', uploadId, 1, Buffer.from('second'))]
    await expect(completeUpload('taken.jsonl', uploadId, parts, { IfNoneMatch: '*' })).rejects.toMatchObject({
      name: 'PreconditionFailed',
      $metadata: { httpStatusCode: 412 },
    })
    expect(await text('taken.jsonl')).toBe('first')
    expect(uploadIds()).toContain(uploadId)
    await expect(abortUpload('taken.jsonl', uploadId)).resolves.toMatchObject({
      $metadata: { httpStatusCode: 204 },
    })
    expect(uploadIds()).not.toContain(uploadId)
    await expect(abortUpload('taken.jsonl', uploadId)).rejects.toMatchObject({
      name: 'NoSuchUpload',
      $metadata: { httpStatusCode: 404 },
    })
  })

  it('refuses a part under 5 MiB that is not the last (EntityTooSmall), and unknown uploads (NoSuchUpload)', async () => {
    const uploadId = await startUpload('small-parts')
    const parts = [
      await uploadPart('small-parts', uploadId, 1, Buffer.from('one')),
      await uploadPart('small-parts', uploadId, 2, Buffer.from('two')),
    ]
    await expect(completeUpload('small-parts', uploadId, parts)).rejects.toMatchObject({
      name: 'EntityTooSmall',
      $metadata: { httpStatusCode: 400 },
    })
    expect(s3.objects().has('small-parts')).toBe(false)
    await expect(uploadPart('small-parts', 'no-such-upload', 1, Buffer.from('x'))).rejects.toMatchObject({
      name: 'NoSuchUpload',
      $metadata: { httpStatusCode: 404 },
    })
    await expect(uploadPart('elsewhere', uploadId, 1, Buffer.from('x'))).rejects.toMatchObject({
      name: 'NoSuchUpload',
    })
    await expect(completeUpload('small-parts', 'no-such-upload', parts)).rejects.toMatchObject({
      name: 'NoSuchUpload',
    })
  })

  it('lists unfinished uploads by prefix, by key then by initiation, a page at a time', async () => {
    const ofB = await startUpload('unfinished/b')
    const ofA = [
      await startUpload('unfinished/a'),
      await startUpload('unfinished/a'),
      await startUpload('unfinished/a'),
    ]
    await startUpload('elsewhere/a')
    const list = (KeyMarker?: string, UploadIdMarker?: string) =>
      client.send(
        new ListMultipartUploadsCommand({
          Bucket: s3.bucket,
          Prefix: 'unfinished/',
          MaxUploads: 2,
          KeyMarker,
          UploadIdMarker,
        }),
      )
    const page = await list()
    expect(page.Uploads?.map((upload) => [upload.Key, upload.UploadId])).toEqual([
      ['unfinished/a', ofA[0]],
      ['unfinished/a', ofA[1]],
    ])
    expect(page.Uploads?.[0]?.Initiated).toBeInstanceOf(Date)
    expect(page).toMatchObject({
      IsTruncated: true,
      NextKeyMarker: 'unfinished/a',
      NextUploadIdMarker: ofA[1],
    })
    // As the S3 sink does: abort what a page lists, then ask for the page after it.
    for (const upload of page.Uploads ?? []) await abortUpload(upload.Key!, upload.UploadId!)
    const next = await list(page.NextKeyMarker, page.NextUploadIdMarker)
    expect(next.Uploads?.map((upload) => upload.UploadId)).toEqual([ofA[2], ofB])
    expect(next.IsTruncated).toBe(false)
  })

  it('stores a Complete whose answer it drops, and answers the SDK retry as the first', async () => {
    const uploadId = await startUpload('dropped-complete')
    const parts = [await uploadPart('dropped-complete', uploadId, 1, Buffer.from('landed'))]
    s3.dropNextResponses(1)
    const completed = await completeUpload('dropped-complete', uploadId, parts, { IfNoneMatch: '*' })
    expect(completed.$metadata.attempts).toBe(2)
    expect(completed.ETag).toBe(s3.objects().get('dropped-complete')?.etag)
    expect(await text('dropped-complete')).toBe('landed')
    expect(uploadIds()).not.toContain(uploadId)
  })

  it('closes its port on stop, even with keep-alive connections open', async () => {
    await put('before-stop', 'x')
    await s3.stop()
    expect(await refusesConnections(Number(new URL(s3.endpoint).port))).toBe(true)
    await s3.stop()
  })
})
