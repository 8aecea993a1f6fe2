/**
 * The object-store destinations through the CLI, against servers started here (and the File sink,
 * the same object sink on a local directory): a sync lands every row once as objects at keys
 * derived from the batch identity, a second run adds nothing, and bad input gets one clear line,
 * for good when no retry can fix it, and never a secret.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { BlobServiceClient } from '@azure/storage-blob'
import { fileRows } from '@skippr/conformance'
import { AzureBlobStore } from '@skippr/sink-azure-blob'
import { LocalStore } from '@skippr/sink-file'
import { S3Store, s3SinkConfig } from '@skippr/sink-s3'
import { hostKeyFingerprint } from '@skippr/sink-sftp'
import {
  type AzuriteServer,
  type S3Server,
  type SshServer,
  startAzurite,
  startS3rver,
  startSshd,
} from '@skippr/test-servers'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failure, SYNC_ROWS, useSinkSync } from './support/sink-sync.js'

const ROWS = SYNC_ROWS

const { syncInto } = useSinkSync()

/** Down to the second, so that a retry keyed by its own clock (over a second later) would land a copy elsewhere. */
const HIVE_TEMPLATE = 'dt={commit_time:%Y-%m-%d}/t={commit_time:%H%M%S}/member_type={field:member_type}'

/**
 * A sync into `sink` (partitioned by HIVE_TEMPLATE, jsonl, with manifests) SIGKILLed right after
 * its first batch landed, before the WAL knew, then rerun over a second later: what the killed run
 * landed is where the rerun put it again, every row is there once under the levels of its value,
 * and the manifests list exactly the objects. `reader` reads the sink's objects.
 */
async function killedAndRerunPartitioned(
  syncInto: ReturnType<typeof useSinkSync>['syncInto'],
  sink: string,
  env: Record<string, string>,
  reader: Pick<LocalStore, 'list' | 'read' | 'close'>,
): Promise<void> {
  const lease = { SKIPPR_LEASE_TTL_SECONDS: '1' }
  const chaos = {
    SKIPPR_CHAOS_MODE: 'yes',
    SKIPPR_CHAOS_PROBABILITY: '1',
    SKIPPR_CHAOS_POINTS: 'after-land',
  }
  const killed = await syncInto(sink, { ...env, ...lease, ...chaos })
  expect(killed.signal).toBe('SIGKILL')
  const landedBeforeKill = await reader.list('')
  expect(landedBeforeKill.length).toBeGreaterThan(0)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const rerun = await syncInto(sink, { ...env, ...lease })
  expect(rerun.stderr).toBe('')
  expect(rerun.code).toBe(0)
  const keys = await reader.list('')
  // What the killed run landed is where the rerun put it again: the same keys, nothing beside them.
  expect(keys).toEqual(expect.arrayContaining(landedBeforeKill))
  const objects = keys.filter((key) => !key.startsWith('_manifests/'))
  const ids: number[] = []
  for (const key of objects) {
    const match =
      /^rentals\/dt=\d{4}-\d{2}-\d{2}\/t=\d{6}\/member_type=([^/]+)\/bikehire\/[0-9a-f]+\/\d{12}-0-\d+\.jsonl$/.exec(
        key,
      )
    expect(match, key).not.toBeNull()
    for (const row of await fileRows(key, await reader.read(key))) {
      expect(row.member_type).toBe(match?.[1])
      ids.push(Number(row.rental_id))
    }
  }
  expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1))
  const manifests = keys.filter((key) => key.startsWith('_manifests/'))
  const listed = []
  for (const key of manifests)
    listed.push(
      ...JSON.parse(new TextDecoder().decode(await reader.read(key))).objects.map(
        (o: { key: string }) => o.key,
      ),
    )
  expect(listed.sort()).toEqual(objects)
  await reader.close()
}

describe('S3', () => {
  let server: S3Server
  const bucket = `skippr-cli-${randomBytes(4).toString('hex')}`
  beforeAll(async () => {
    server = await startS3rver()
    await server.createBucket(bucket)
  })
  afterAll(async () => {
    await server?.stop()
  })
  const env = () => ({ S3_KEY: server.accessKeyId, S3_SECRET: server.secretAccessKey })
  const entry = (fields: string) =>
    `S3: { bucket: ${bucket}, endpoint: "${server.endpoint}", region: us-east-1, access_key_id: "\${S3_KEY}", secret_access_key: "\${S3_SECRET}", ${fields} }`
  const store = (prefix: string) =>
    new S3Store(
      v.parse(s3SinkConfig, {
        bucket,
        endpoint: server.endpoint,
        region: 'us-east-1',
        access_key_id: server.accessKeyId,
        secret_access_key: server.secretAccessKey,
        prefix,
        format: 'parquet',
      }),
    )

  it('lands every row once as Parquet objects, with manifests; a second run adds nothing', async () => {
    const first = await syncInto(entry('prefix: cli/parquet, format: parquet, manifest: true'), env())
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const reader = store('cli/parquet')
    const keys = await reader.list('')
    const objects = keys.filter((key) => !key.startsWith('_manifests/'))
    expect(objects.length).toBeGreaterThan(0)
    for (const key of objects) expect(key).toMatch(/^rentals\/bikehire\/[0-9a-f]+\/\d{12}-0\.parquet$/)
    expect(keys.length).toBe(objects.length * 2)
    const ids = []
    for (const key of objects)
      for (const row of await fileRows(key, await reader.read(key))) ids.push(Number(row.rental_id))
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1))
    const again = await syncInto(entry('prefix: cli/parquet, format: parquet, manifest: true'), env())
    expect(again.code).toBe(0)
    expect(await reader.list('')).toEqual(keys)
    await reader.close()
  })

  it('partition_by: killed after a landing and rerun later, every row once, under levels of the WAL commit time', async () => {
    const sink = entry(`prefix: cli/hive, format: jsonl, manifest: true, partition_by: "${HIVE_TEMPLATE}"`)
    await killedAndRerunPartitioned(syncInto, sink, env(), store('cli/hive'))
  }, 120_000)

  it('a missing bucket: exit 1 at once, one line naming it, never the secret', async () => {
    const run = await syncInto(
      `S3: { bucket: no-such-bucket, endpoint: "${server.endpoint}", region: us-east-1, access_key_id: "\${S3_KEY}", secret_access_key: "\${S3_SECRET}", format: jsonl }`,
      env(),
    )
    expect(run.code).toBe(1)
    expect(failure(run.stderr)).toMatchObject({
      lines: 1,
      last: expect.stringContaining('s3://no-such-bucket'),
    })
    expect(run.stderr).not.toMatch(/retry later/)
    expect(`${run.stdout}${run.stderr}`).not.toContain(server.secretAccessKey)
  })

  it('a plaintext secret_access_key is refused before anything runs', async () => {
    const run = await syncInto(
      `S3: { bucket: ${bucket}, endpoint: "${server.endpoint}", access_key_id: "\${S3_KEY}", secret_access_key: plain-secret-4411, format: jsonl }`,
      env(),
    )
    expect(run.code).not.toBe(0)
    expect(failure(run.stderr)).toMatchObject({
      lines: 1,
      last: expect.stringContaining('secret_access_key'),
    })
    expect(run.stderr).not.toContain('plain-secret-4411')
  })
})

describe('AzureBlob', () => {
  let server: AzuriteServer
  const container = `skippr-cli-${randomBytes(4).toString('hex')}`
  beforeAll(async () => {
    server = await startAzurite()
    await BlobServiceClient.fromConnectionString(server.connectionString)
      .getContainerClient(container)
      .create()
  })
  afterAll(async () => {
    await server?.stop()
  })
  const entry = (fields: string) =>
    `AzureBlob: { container: ${container}, connection_string: "\${AZ_CONN}", ${fields} }`

  it('lands every row once as gzip CSV blobs; a second run adds nothing', async () => {
    const env = { AZ_CONN: server.connectionString }
    const first = await syncInto(entry('prefix: cli, format: csv, compression: gzip'), env)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const reader = new AzureBlobStore({
      container,
      prefix: 'cli',
      connection_string: server.connectionString,
    })
    const keys = await reader.list('')
    for (const key of keys) expect(key).toMatch(/^rentals\/bikehire\/[0-9a-f]+\/\d{12}-0\.csv\.gz$/)
    const ids = []
    for (const key of keys)
      for (const row of await fileRows(key, await reader.read(key))) ids.push(Number(row.rental_id))
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1))
    expect((await syncInto(entry('prefix: cli, format: csv, compression: gzip'), env)).code).toBe(0)
    expect(await reader.list('')).toEqual(keys)
    await reader.close()
  })

  it('a missing container: exit 1 at once, one line naming it, never the account key', async () => {
    const run = await syncInto(
      `AzureBlob: { container: no-such-container, connection_string: "\${AZ_CONN}", format: jsonl }`,
      { AZ_CONN: server.connectionString },
    )
    expect(run.code).toBe(1)
    expect(failure(run.stderr)).toMatchObject({
      lines: 1,
      last: expect.stringContaining('no-such-container'),
    })
    expect(run.stderr).not.toMatch(/retry later/)
    expect(`${run.stdout}${run.stderr}`).not.toContain(server.accountKey)
  })
})

describe('Sftp', () => {
  let server: SshServer
  beforeAll(async () => {
    server = await startSshd()
  })
  afterAll(async () => {
    await server?.stop()
  })
  const hostKey = () =>
    hostKeyFingerprint(Buffer.from(server.hostPublicKey.split(' ')[1] as string, 'base64'))
  const entry = (fields: string) =>
    `Sftp: { host: ${server.host}, port: ${server.port}, username: ${server.username}, private_key: "\${SFTP_KEY}", host_key: "${hostKey()}", path: "${server.sftpRoot}", ${fields} }`

  it('lands every row once as zstd JSON-lines files, none left half-written; a second run adds nothing', async () => {
    const env = { SFTP_KEY: server.privateKey }
    const first = await syncInto(entry('format: jsonl, compression: zstd'), env)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    // The server's files are on this machine: read them as a downstream reader of the directory would.
    const files = async () =>
      (await readdir(server.sftpRoot, { recursive: true })).filter((f) => f.endsWith('.zst')).sort()
    const written = await files()
    for (const file of written) expect(file).toMatch(/^rentals\/bikehire\/[0-9a-f]+\/\d{12}-0\.jsonl\.zst$/)
    const entries = await readdir(server.sftpRoot, { recursive: true, withFileTypes: true })
    expect(entries.filter((e) => e.isFile() && e.name.startsWith('.'))).toEqual([])
    const ids = []
    for (const file of written)
      for (const row of await fileRows(file, await readFile(path.join(server.sftpRoot, file))))
        ids.push(Number(row.rental_id))
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1))
    expect((await syncInto(entry('format: jsonl, compression: zstd'), env)).code).toBe(0)
    expect(await files()).toEqual(written)
  })

  it('a key the server does not know: exit 1 at once, one line naming the server, never the key', async () => {
    const { privateKey } = await import('node:crypto').then((c) =>
      c.generateKeyPairSync('ed25519', {
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      }),
    )
    const run = await syncInto(entry('format: jsonl'), { SFTP_KEY: privateKey })
    expect(run.code).toBe(1)
    expect(failure(run.stderr)).toMatchObject({
      lines: 1,
      last: expect.stringContaining(`${server.host}:${server.port}`),
    })
    expect(run.stderr).not.toMatch(/retry later/)
    expect(`${run.stdout}${run.stderr}`).not.toContain(privateKey.split('\n')[1] as string)
  })
})

describe('File', () => {
  let dir = ''
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skippr-cli-file-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('partition_by: killed after a landing and rerun later, every row once, under levels of the WAL commit time', async () => {
    const out = path.join(dir, 'hive')
    const sink = `File: { path: "${out}", format: jsonl, manifest: true, partition_by: "${HIVE_TEMPLATE}" }`
    await killedAndRerunPartitioned(syncInto, sink, {}, new LocalStore(out))
    // The levels are directories a reader of the disk walks, and no temporary file is left.
    const entries = await readdir(out, { recursive: true, withFileTypes: true })
    expect(entries.filter((e) => e.isFile() && e.name.startsWith('.'))).toEqual([])
    expect(await readdir(path.join(out, 'rentals'))).toEqual([
      expect.stringMatching(/^dt=\d{4}-\d{2}-\d{2}$/),
    ])
  }, 120_000)
})
