/**
 * `--host-loss`: every run on a new host. The WAL is in S3 (an s3rver of the run) and the state in
 * DynamoDB (a dynalite of the run), and the pipeline's data dir is deleted after every run, killed
 * or not, so nothing a run left on disk can help the next. The verdict is the same as without: every
 * source row exactly once in the destination.
 */
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { startDynalite, startS3rver } from '@skippr/test-servers'

export interface HostLoss {
  /** The environment of every run: where the WAL and the state are. */
  readonly env: Readonly<Record<string, string>>
  /** The `skippr:` section of skippr.yml: the dynamodb store, its table created by the first run. */
  readonly skipprSection: Readonly<Record<string, unknown>>
  readonly label: string
  /** Deletes the data dir, as a lost host takes it with it. */
  forget(dataDir: string): Promise<void>
  stop(): Promise<void>
}

export async function startHostLoss(): Promise<HostLoss> {
  const [s3, dynamo] = await Promise.all([startS3rver(), startDynalite()])
  const bucket = 'skippr-chaos-wal'
  await s3.createBucket(bucket)
  const table = `skippr-chaos-${randomBytes(4).toString('hex')}`
  return {
    env: {
      WAL_STORAGE: 's3',
      SKIPPR_WAL_S3_BUCKET: `${bucket}/chaos`,
      AWS_REGION: s3.region,
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    },
    skipprSection: { store: { type: 'dynamodb', name: table, create: true } },
    label: `WAL in s3://${bucket}/chaos (s3rver), state in DynamoDB table ${table} (dynalite), data dir deleted after every run`,
    forget: (dataDir) => rm(dataDir, { recursive: true, force: true }),
    async stop() {
      await Promise.all([s3.stop(), dynamo.stop()])
    },
  }
}
