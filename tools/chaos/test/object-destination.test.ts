/**
 * The audit sees what a store's own listing may not: on each real server, an object the sink would
 * never write is planted where a careless check would miss it (S3 and Azure: outside the prefix;
 * SFTP: a temporary file, which the SFTP store's listing hides), and the audit must name it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { AzureBlobStore } from '@skippr/sink-azure-blob'
import { S3Store } from '@skippr/sink-s3'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { AZURE_CONNECTION_VARIABLE } from '../src/destination-azure-blob.js'
import { S3_KEY_ID_VARIABLE, S3_SECRET_VARIABLE } from '../src/destination-s3.js'
import {
  azureBlobDestination,
  type Destination,
  type SinkKind,
  s3Destination,
  sftpDestination,
} from '../src/index.js'

type ObjectKind = Extract<SinkKind, 's3' | 'azure-blob' | 'sftp'>

const info = { sha256: '0'.repeat(64), contentType: 'application/x-ndjson', batch: 'planted' }
const body = [new TextEncoder().encode('{"rental_id":1}\n')]

const open: Record<ObjectKind, (dir: string) => Promise<Destination>> = {
  s3: (dir) => s3Destination(dir, 'bikehire'),
  'azure-blob': (dir) => azureBlobDestination(dir, 'bikehire'),
  sftp: (dir) => sftpDestination(dir, 'bikehire'),
}

/** Plants an object where the sink never writes; resolves with its key as the audit names it. */
const plant: Record<ObjectKind, (destination: Destination) => Promise<string>> = {
  async s3({ sink, env }) {
    const entry = sink.S3 as { bucket: string; region: string; endpoint: string }
    const store = new S3Store({
      ...entry,
      access_key_id: env[S3_KEY_ID_VARIABLE],
      secret_access_key: env[S3_SECRET_VARIABLE],
      prefix: '',
      format: 'jsonl',
      compression: 'none',
      manifest: false,
      part_size_mib: 16,
    })
    await store.create('rentals/bikehire/0123456789abcdef/000000000001-0.jsonl', body, info)
    await store.close()
    return 'rentals/bikehire/0123456789abcdef/000000000001-0.jsonl'
  },
  async 'azure-blob'({ sink, env }) {
    const { container } = sink.AzureBlob as { container: string }
    const connection = env[AZURE_CONNECTION_VARIABLE] as string
    const store = new AzureBlobStore({ container, prefix: 'other', connection_string: connection })
    await store.create('rentals/bikehire/0123456789abcdef/000000000001-0.parquet', body, info)
    return 'other/rentals/bikehire/0123456789abcdef/000000000001-0.parquet'
  },
  async sftp({ sink }) {
    const { path: root } = sink.Sftp as { path: string }
    const dir = path.join(root, 'chaos', 'rentals', 'bikehire', '0123456789abcdef')
    await mkdir(dir, { recursive: true })
    await writeFile(path.join(dir, '.000000000001-0.csv.gz.0123456789abcdef.tmp'), body[0] as Uint8Array)
    return 'chaos/rentals/bikehire/0123456789abcdef/.000000000001-0.csv.gz.0123456789abcdef.tmp'
  },
}

describe.each<ObjectKind>(['s3', 'azure-blob', 'sftp'])('the %s destination', (kind) => {
  let dir: string
  let destination: Destination
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'skippr-chaos-objects-'))
    destination = await open[kind](dir)
  })
  afterEach(async () => {
    await destination.dispose({ keep: false })
    await rm(dir, { recursive: true, force: true })
  })

  test('passes an empty store: nothing landed, nothing stray', async () => {
    expect(await destination.audit?.()).toEqual({
      problems: [],
      summary: `0 data objects of 0 rows${kind === 'sftp' ? ', 0 manifests' : ''}, 0 others`,
    })
    const [count] = await destination.query(`SELECT count(*) AS n FROM ${destination.table}`)
    expect(Number(count?.n)).toBe(0)
  })

  test('names an object the key layout does not', async () => {
    const key = await plant[kind](destination)
    expect((await destination.audit?.())?.problems).toEqual([
      `1 objects the key layout does not name: ${key}`,
    ])
  })
})
