/** Bad input against s3rver: each one line, naming the bucket, classified, never holding a secret. */
import { allTypesSchema, makeBatch, trickyRows } from '@skippr/conformance'
import { isPermanent } from '@skippr/connector-api'
import { ObjectSink } from '@skippr/object-sink'
import { freePorts, startConditionalS3 } from '@skippr/test-servers'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3Store, s3SinkConfig } from '../src/index.js'
import { s3Fixture } from './helpers.js'

const fixture = s3Fixture()
beforeAll(() => fixture.start())
afterAll(() => fixture.stop())

const schema = allTypesSchema('orders')
const batch = makeBatch({ pipeline: 'p', seq: 1, parts: [{ schema, format: 'jsonl', rows: trickyRows() }] })

function sinkFor(fields: Record<string, unknown>) {
  const config = fixture.config(fields)
  return new ObjectSink(new S3Store(config), {
    encoding: { format: 'jsonl', compression: 'none' },
    manifest: false,
    pipeline: 'p',
  })
}

async function failure(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a failure')
}

describe('S3 sink: bad input', () => {
  it('a missing bucket: permanent, one line naming it and the fix', async () => {
    const sink = sinkFor({ bucket: 'no-such-bucket' })
    const error = await failure(() => sink.prepare(schema))
    expect(error.message).toBe(
      's3://no-such-bucket: the bucket does not exist; create it or fix bucket (and region or endpoint)',
    )
    expect(isPermanent(error)).toBe(true)
    const outcome = await sink.write(batch)
    expect(outcome.status).toBe('fatal')
    await sink.close()
  })

  it('refused credentials: permanent, one line, without the secret', async () => {
    // s3rver checks the access key id (it has one), not the signature.
    const secret = 'wrong-secret-key-1234'
    const sink = sinkFor({ access_key_id: 'NOT-A-KEY', secret_access_key: secret })
    const error = await failure(() => sink.prepare(schema))
    expect(error.message).toMatch(/^s3:\/\/skippr-\w+: access denied \(HTTP 403\); check the credentials/)
    expect(error.message).not.toContain('\n')
    expect(error.message).not.toContain(secret)
    expect(isPermanent(error)).toBe(true)
    const outcome = await sink.write(batch)
    expect(outcome.status === 'fatal' && outcome.error.message).toMatch(/credentials were refused/)
    await sink.close()
  })

  it('read-only credentials (the fake S3: s3rver has no policies): permanent at the first write, naming the object', async () => {
    const fake = await startConditionalS3({ readOnly: true })
    const config = v.parse(s3SinkConfig, {
      bucket: fake.bucket,
      endpoint: fake.endpoint,
      region: fake.region,
      access_key_id: fake.accessKeyId,
      secret_access_key: fake.secretAccessKey,
      format: 'jsonl',
    })
    const sink = new ObjectSink(new S3Store(config), {
      encoding: { format: 'jsonl', compression: 'none' },
      manifest: false,
      pipeline: 'p',
    })
    try {
      await sink.prepare(schema)
      const outcome = await sink.write(batch)
      expect(outcome.status).toBe('fatal')
      if (outcome.status !== 'fatal') return
      expect(isPermanent(outcome.error)).toBe(true)
      expect(outcome.error.message).toBe(
        `s3://${fake.bucket}/orders/p/epoch-1/000000000001-0.jsonl: access denied (Access Denied); check the credentials, and that they may s3:PutObject, s3:GetObject, s3:ListBucket and s3:AbortMultipartUpload on the bucket and prefix`,
      )
      expect(fake.objects().size).toBe(0)
    } finally {
      await sink.close()
      await fake.stop()
    }
  })

  it('an unreachable endpoint: retried, one line naming the bucket', async () => {
    const [port] = (await freePorts(1)) as [number]
    const sink = sinkFor({ endpoint: `http://127.0.0.1:${port}` })
    const error = await failure(() => sink.prepare(schema))
    expect(isPermanent(error)).toBe(false)
    expect(error.message).toMatch(/^s3:\/\/skippr-\w+: .*ECONNREFUSED.*; will retry$/)
    const outcome = await sink.write(batch)
    expect(outcome.status).toBe('retry')
    await sink.close()
  })
})
