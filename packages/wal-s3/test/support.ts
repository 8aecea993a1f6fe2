/**
 * A real s3rver and a real embedded state store standing in for the DynamoDB one: the records live
 * in their own directory, apart from any pipeline's data dir, so a test can throw a "host" away.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openStateStore, type StateStore } from '@skippr/state'
import { type S3Server, startS3rver } from '@skippr/test-servers'
import { s3Wal } from '../src/index.js'

export interface S3WalWorld {
  readonly server: S3Server
  readonly bucket: string
  readonly store: StateStore
  /** A fresh data dir, as on a new host. */
  dataDir(): Promise<string>
  /** The WAL backend type over the bucket (with `prefix`) and the shared store. */
  wal(prefix?: string): ReturnType<typeof s3Wal>
  stop(): Promise<void>
}

export async function startS3WalWorld(): Promise<S3WalWorld> {
  const server = await startS3rver()
  const bucket = 'wal'
  await server.createBucket(bucket)
  const dirs: string[] = []
  const temp = async (name: string) => {
    const dir = await mkdtemp(path.join(tmpdir(), `skippr-wal-s3-${name}-`))
    dirs.push(dir)
    return dir
  }
  const store = await openStateStore({ dataDir: await temp('store') })
  return {
    server,
    bucket,
    store,
    dataDir: () => temp('host'),
    wal: (prefix = 'tests') =>
      s3Wal({
        bucket: `${bucket}/${prefix}`,
        workspace: store.workspace,
        endpoint: server.endpoint,
        region: server.region,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
        records: (pipeline) => store.pipeline(pipeline).walRecord(),
      }),
    async stop() {
      await store.close()
      await server.stop()
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
    },
  }
}
