/**
 * S3 as a chaos destination: an s3rver of its own (@skippr/test-servers) with a bucket for the run,
 * JSON lines under a two-level prefix, the key pair given to skipprd through `${NAME}` references
 * as the sink's secret fields demand. s3rver ignores `If-None-Match`, so a retry rewrites the same
 * bytes at the same key: overwrite on retry, the tier's weaker form.
 */
import { randomBytes } from 'node:crypto'
import type { S3SinkConfig } from '@skippr/sink-s3'
import { S3Store } from '@skippr/sink-s3'
import { startS3rver } from '@skippr/test-servers'
import type { Destination } from './destination.js'
import type { ObjectLayout } from './object-audit.js'
import { type ObjectServer, objectDestination } from './object-destination.js'

/** The variables skipprd reads the key pair from (the entry's `${NAME}` references). */
export const S3_KEY_ID_VARIABLE = 'SKIPPR_CHAOS_S3_ACCESS_KEY_ID'
export const S3_SECRET_VARIABLE = 'SKIPPR_CHAOS_S3_SECRET_ACCESS_KEY'

/** Starts s3rver with a bucket of the run; `pipeline` names the keys the audit expects. */
export async function s3Destination(workDir: string, pipeline: string): Promise<Destination> {
  const server = await startS3rver()
  const bucket = `skippr-chaos-${randomBytes(4).toString('hex')}`
  try {
    await server.createBucket(bucket)
  } catch (error) {
    await server.stop()
    throw error
  }
  const layout: ObjectLayout = {
    prefix: 'raw/chaos',
    namespace: 'rentals',
    pipeline,
    extension: 'jsonl',
    manifest: false,
  }
  const { endpoint, region } = server
  /** A store on the bucket as the sink's config would make it, with `prefix` as its root. */
  const storeAt = (prefix: string) => {
    const config: S3SinkConfig = {
      bucket,
      region,
      endpoint,
      access_key_id: server.accessKeyId,
      secret_access_key: server.secretAccessKey,
      prefix,
      format: 'jsonl',
      compression: 'none',
      manifest: false,
      part_size_mib: 16,
    }
    return new S3Store(config, { createsOnce: false })
  }
  const objects: ObjectServer = {
    label: `S3 bucket ${bucket} at ${endpoint} (s3rver), prefix ${layout.prefix}, JSON lines`,
    sink: {
      S3: {
        bucket,
        prefix: layout.prefix,
        region,
        endpoint,
        access_key_id: `\${${S3_KEY_ID_VARIABLE}}`,
        secret_access_key: `\${${S3_SECRET_VARIABLE}}`,
        format: 'jsonl',
      },
    },
    env: { [S3_KEY_ID_VARIABLE]: server.accessKeyId, [S3_SECRET_VARIABLE]: server.secretAccessKey },
    layout,
    async allKeys() {
      // The bucket from its top: a key outside the prefix is a stray too.
      const bucketStore = storeAt('')
      try {
        return await bucketStore.list('')
      } finally {
        await bucketStore.close()
      }
    },
    reader: () => storeAt(layout.prefix),
    stop: () => server.stop(),
  }
  return objectDestination(workDir, objects)
}
