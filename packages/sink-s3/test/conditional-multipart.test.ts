/**
 * lib-storage's `Upload`, as the S3 sink makes large objects, against the fake S3 of
 * @skippr/test-servers, which honours `If-None-Match: *` on CompleteMultipartUpload as AWS does:
 * a body of several parts is created once and whole, and a second upload to its key gets 412.
 * With the SDK's default checksums and with the sink's (`WHEN_REQUIRED`), which send parts differently.
 */
import { randomBytes } from 'node:crypto'
import { S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import type { ConditionalS3 } from '@skippr/test-servers'
import { startConditionalS3 } from '@skippr/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const MiB = 1024 * 1024

describe.each(['WHEN_SUPPORTED', 'WHEN_REQUIRED'] as const)(
  'lib-storage Upload with If-None-Match: * (checksums %s)',
  (checksums) => {
    let fake: ConditionalS3
    let client: S3Client
    beforeAll(async () => {
      fake = await startConditionalS3()
      client = new S3Client({
        endpoint: fake.endpoint,
        region: fake.region,
        forcePathStyle: true,
        credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: fake.secretAccessKey },
        requestChecksumCalculation: checksums,
      })
    })
    afterAll(async () => {
      client?.destroy()
      await fake?.stop()
    })

    const upload = (Key: string, Body: Buffer) =>
      new Upload({
        client,
        params: { Bucket: fake.bucket, Key, Body, IfNoneMatch: '*' },
        partSize: 5 * MiB,
      }).done()

    it('creates a 12 MiB body from 5 MiB parts as one whole object', async () => {
      const body = randomBytes(12 * MiB)
      await upload('whole.bin', body)
      const stored = fake.objects().get('whole.bin')
      // Buffer.equals: vitest would compare 12 MiB byte by byte, for minutes.
      expect(stored?.body.equals(body)).toBe(true)
      expect(stored?.etag).toMatch(/-3"$/)
      expect(fake.uploads()).toEqual([])
    })

    it('fails a second upload to the key with 412, and leaves the object and no upload behind', async () => {
      const first = randomBytes(12 * MiB)
      await upload('once.bin', first)
      await expect(upload('once.bin', randomBytes(12 * MiB))).rejects.toMatchObject({
        name: 'PreconditionFailed',
        $metadata: { httpStatusCode: 412 },
      })
      expect(fake.objects().get('once.bin')?.body.equals(first)).toBe(true)
      // The 412 leaves the upload open; lib-storage aborts it (leavePartsOnError: false).
      expect(fake.uploads()).toEqual([])
    })
  },
)
