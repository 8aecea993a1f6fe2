import { randomBytes } from 'node:crypto'
import type { ObjectStoreHarness, SinkHarness } from '@skippr/conformance'
import { objectRows } from '@skippr/conformance'
import type { FileEncoding } from '@skippr/file-formats'
import { ObjectSink } from '@skippr/object-sink'
import type { S3Server } from '@skippr/test-servers'
import { startS3rver } from '@skippr/test-servers'
import * as v from 'valibot'
import type { S3SinkConfig } from '../src/index.js'
import { S3Store, s3SinkConfig } from '../src/index.js'

/** An s3rver with one bucket for a test file, started in beforeAll and stopped in afterAll. */
export interface S3Fixture {
  readonly server: () => S3Server
  readonly bucket: string
  start(): Promise<void>
  stop(): Promise<void>
  /** The sink config for this bucket, with s3rver's credentials and the fields given. */
  config(fields?: Record<string, unknown>): S3SinkConfig
}

export function s3Fixture(): S3Fixture {
  let server: S3Server | undefined
  const bucket = `skippr-${randomBytes(4).toString('hex')}`
  return {
    server: () => server as S3Server,
    bucket,
    async start() {
      server = await startS3rver()
      await server.createBucket(bucket)
    },
    stop: async () => server?.stop(),
    config(fields = {}) {
      const s = server as S3Server
      return v.parse(s3SinkConfig, {
        bucket,
        region: s.region,
        endpoint: s.endpoint,
        access_key_id: s.accessKeyId,
        secret_access_key: s.secretAccessKey,
        format: 'jsonl',
        ...fields,
      })
    },
  }
}

/** s3rver ignores `If-None-Match`: its stores rewrite an existing key. */
export function s3StoreHarness(fixture: S3Fixture): ObjectStoreHarness {
  return {
    name: 's3 (s3rver)',
    setup: () => fixture.start(),
    createStore: async () => new S3Store(fixture.config({ prefix: 'contract' }), { createsOnce: false }),
    cleanup: () => fixture.stop(),
  }
}

export function s3SinkHarness(fixture: S3Fixture, encoding: FileEncoding): SinkHarness {
  const prefix = `conformance/${encoding.format}-${encoding.compression}`
  const store = () => new S3Store(fixture.config({ prefix, ...encoding }), { createsOnce: false })
  return {
    name: `s3 (s3rver, ${encoding.format}, ${encoding.compression})`,
    setup: () => fixture.start(),
    createSink: async () => new ObjectSink(store(), { encoding, manifest: false, pipeline: 'conformance' }),
    readRows: async (namespace) => {
      const reader = store()
      try {
        return await objectRows(reader, namespace)
      } finally {
        await reader.close()
      }
    },
    cleanup: () => fixture.stop(),
  }
}
