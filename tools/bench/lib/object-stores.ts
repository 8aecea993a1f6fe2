/**
 * The object stores the object-stores bench writes to, each a real server on 127.0.0.1 started by
 * the bench (@skippr/test-servers): S3 on s3rver, Azure Blob on Azurite, SFTP on OpenSSH's sshd.
 * For each: the `data_sinks` entry skipprd is given (credentials as `${NAME}` references), what the
 * bare uploader (lib/object-put.mjs) needs to reach the same place, and a listing, reading and
 * removal of objects under a prefix through the service's own SDK (SFTP: the server's own disk).
 */
import { randomBytes } from 'node:crypto'
import { readdir, readFile, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { BlobServiceClient } from '@azure/storage-blob'
import { hostKeyFingerprint } from '@skippr/sink-sftp'
import { startAzurite, startS3rver, startSshd } from '@skippr/test-servers'
import { serverPid } from './server-cpu.js'

/** The stores, in the order the bench runs them. */
export const STORE_KINDS = ['s3', 'azure-blob', 'sftp'] as const
export type StoreKind = (typeof STORE_KINDS)[number]

/** An object under a prefix: its key relative to the prefix, and its size. */
export interface ListedObject {
  readonly key: string
  readonly bytes: number
}

/** A started server with a bucket, container or directory for the bench, and the ways to it. */
export interface BenchStore {
  readonly kind: StoreKind
  /** For the report: the service and the server it runs on. */
  readonly label: string
  /** The server process, for its CPU time (lib/server-tree-cpu.ts). */
  readonly pid: number
  /** The `data_sinks` entry writing `format` objects under `prefix`. */
  sinkEntry(prefix: string, format: 'jsonl' | 'parquet'): object
  /** The values of the entry's `${NAME}` references. */
  readonly env: Record<string, string>
  /** The environment of lib/object-put.mjs: where it uploads, with the same credentials. */
  readonly putEnv: Record<string, string>
  /** Every object under `prefix`, in key order. */
  list(prefix: string): Promise<ListedObject[]>
  read(prefix: string, key: string): Promise<Uint8Array>
  /** Removes every object under `prefix`, so the servers never hold more than a round's objects. */
  remove(prefix: string): Promise<void>
  stop(): Promise<void>
}

const S3_KEY_ID_VARIABLE = 'SKIPPR_BENCH_S3_KEY_ID'
const S3_SECRET_VARIABLE = 'SKIPPR_BENCH_S3_SECRET'
const AZURE_CONNECTION_VARIABLE = 'SKIPPR_BENCH_AZURE_CONNECTION'
const SFTP_KEY_VARIABLE = 'SKIPPR_BENCH_SFTP_KEY'

/** A `${NAME}` reference: secret fields take only these, never the value. */
const reference = (name: string) => `\${${name}}`

/** The variable lib/object-put.mjs reads its target from: JSON, as it holds credentials. */
export const PUT_TARGET_VARIABLE = 'SKIPPR_BENCH_PUT_TARGET'

/** Starts the server of `kind` and makes the bucket or container the bench writes to. */
export function startStore(kind: StoreKind): Promise<BenchStore> {
  switch (kind) {
    case 's3':
      return s3Store()
    case 'azure-blob':
      return azureStore()
    case 'sftp':
      return sftpStore()
  }
}

async function s3Store(): Promise<BenchStore> {
  const server = await startS3rver()
  const bucket = `skippr-bench-${randomBytes(4).toString('hex')}`
  await server.createBucket(bucket)
  const credentials = { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey }
  const client = new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    credentials,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  const list = async (prefix: string): Promise<ListedObject[]> => {
    const objects: ListedObject[] = []
    let token: string | undefined
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
      )
      for (const { Key, Size } of page.Contents ?? [])
        if (Key) objects.push({ key: Key.slice(prefix.length + 1), bytes: Size ?? 0 })
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token)
    return objects.sort(byKey)
  }
  return {
    kind: 's3',
    label: 'S3 on s3rver',
    pid: await serverPid(server.dir),
    sinkEntry: (prefix, format) => ({
      S3: {
        bucket,
        prefix,
        region: server.region,
        endpoint: server.endpoint,
        access_key_id: reference(S3_KEY_ID_VARIABLE),
        secret_access_key: reference(S3_SECRET_VARIABLE),
        format,
      },
    }),
    env: {
      [S3_KEY_ID_VARIABLE]: credentials.accessKeyId,
      [S3_SECRET_VARIABLE]: credentials.secretAccessKey,
    },
    putEnv: {
      [PUT_TARGET_VARIABLE]: JSON.stringify({
        kind: 's3',
        endpoint: server.endpoint,
        region: server.region,
        bucket,
        ...credentials,
      }),
    },
    list,
    async read(prefix, key) {
      const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}/${key}` }))
      return (await object.Body?.transformToByteArray()) ?? new Uint8Array(0)
    },
    async remove(prefix) {
      for (const { key } of await list(prefix))
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}/${key}` }))
    },
    async stop() {
      client.destroy()
      await server.stop()
    },
  }
}

async function azureStore(): Promise<BenchStore> {
  const server = await startAzurite()
  const name = `skippr-bench-${randomBytes(4).toString('hex')}`
  const container = BlobServiceClient.fromConnectionString(server.connectionString).getContainerClient(name)
  await container.create()
  const list = async (prefix: string): Promise<ListedObject[]> => {
    const objects: ListedObject[] = []
    for await (const blob of container.listBlobsFlat({ prefix: `${prefix}/` }))
      objects.push({ key: blob.name.slice(prefix.length + 1), bytes: blob.properties.contentLength ?? 0 })
    return objects.sort(byKey)
  }
  return {
    kind: 'azure-blob',
    label: 'Azure Blob on Azurite',
    pid: await serverPid(`--blobPort ${new URL(server.blobEndpoint).port}`),
    sinkEntry: (prefix, format) => ({
      AzureBlob: { container: name, prefix, connection_string: reference(AZURE_CONNECTION_VARIABLE), format },
    }),
    env: { [AZURE_CONNECTION_VARIABLE]: server.connectionString },
    putEnv: {
      [PUT_TARGET_VARIABLE]: JSON.stringify({
        kind: 'azure-blob',
        connectionString: server.connectionString,
        container: name,
      }),
    },
    list,
    read: (prefix, key) => container.getBlockBlobClient(`${prefix}/${key}`).downloadToBuffer(),
    async remove(prefix) {
      for (const { key } of await list(prefix)) await container.deleteBlob(`${prefix}/${key}`)
    },
    stop: () => server.stop(),
  }
}

async function sftpStore(): Promise<BenchStore> {
  const server = await startSshd()
  const root = server.sftpRoot
  const [, hostKey] = server.hostPublicKey.split(' ')
  // sshd serves this machine's own disk: the bench looks at the files there, not through a session
  // whose CPU would count as the server's.
  const local = (prefix: string) => path.join(root, ...prefix.split('/'))
  return {
    kind: 'sftp',
    label: 'SFTP on sshd',
    pid: await serverPid(path.join(server.dir, 'sshd_config')),
    sinkEntry: (prefix, format) => ({
      Sftp: {
        host: server.host,
        port: server.port,
        username: server.username,
        private_key: reference(SFTP_KEY_VARIABLE),
        host_key: hostKeyFingerprint(Buffer.from(hostKey ?? '', 'base64')),
        path: root,
        prefix,
        format,
      },
    }),
    env: { [SFTP_KEY_VARIABLE]: server.privateKey },
    putEnv: {
      [PUT_TARGET_VARIABLE]: JSON.stringify({
        kind: 'sftp',
        host: server.host,
        port: server.port,
        username: server.username,
        privateKey: server.privateKey,
        root,
      }),
    },
    async list(prefix) {
      const dir = local(prefix)
      const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
      const objects: ListedObject[] = []
      for (const entry of entries.filter((e) => e.isFile())) {
        const file = path.join(entry.parentPath, entry.name)
        objects.push({
          key: path.relative(dir, file).split(path.sep).join('/'),
          bytes: (await stat(file)).size,
        })
      }
      return objects.sort(byKey)
    },
    read: (prefix, key) => readFile(path.join(local(prefix), ...key.split('/'))),
    remove: (prefix) => rm(local(prefix), { recursive: true, force: true }),
    stop: () => server.stop(),
  }
}

const byKey = (a: ListedObject, b: ListedObject) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
