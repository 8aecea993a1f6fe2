/**
 * The Azure Blob store against Azurite: the object store contract, blobs above the block size
 * staged and committed whole, leftovers of a crashed upload invisible and harmless, the metadata
 * written with each blob, and the server's own refusal of a second create.
 */
import { randomBytes } from 'node:crypto'
import { objectStoreSuite } from '@skippr/conformance'
import type { ObjectInfo } from '@skippr/object-sink'
import { sha256 } from '@skippr/object-sink'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AzureBlobStore, BATCH_METADATA, DEFAULT_BLOCK_BYTES, SHA256_METADATA } from '../src/index.js'
import { azureFixture, storeHarness } from './helpers.js'

const fixture = azureFixture()
beforeAll(() => fixture.start())
afterAll(() => fixture.stop())

objectStoreSuite(storeHarness(fixture))

function infoOf(body: readonly Uint8Array[], batch = 'p/e/000000000001/0'): ObjectInfo {
  return { sha256: sha256(body), contentType: 'application/x-ndjson', batch }
}

/** `count` chunks of random bytes, `size` each. */
function randomChunks(count: number, size: number): Uint8Array[] {
  return Array.from({ length: count }, () => new Uint8Array(randomBytes(size)))
}

describe('azure blob store (Azurite)', () => {
  it('names its root azure://<account>/<container>/<prefix>, with no credential in it', () => {
    const config = fixture.config({ prefix: '/raw/skippr/' })
    const store = new AzureBlobStore(config)
    expect(store.location).toBe(`azure://devstoreaccount1/${fixture.container}/raw/skippr`)
    expect(new AzureBlobStore(fixture.config()).location).toBe(
      `azure://devstoreaccount1/${fixture.container}`,
    )
    expect(store.location).not.toContain(fixture.server().accountKey)
  })

  it('stages a body above the block size as blocks and commits it whole, once', async () => {
    const store = new AzureBlobStore(fixture.config({ prefix: 'large' }))
    await store.open()
    // Three chunks that do not line up with the 8 MiB blocks: 3 blocks, the last one short.
    const body = randomChunks(3, 6 * 1024 * 1024 + 7)
    const bytes = body.reduce((sum, chunk) => sum + chunk.length, 0)
    expect(bytes).toBeGreaterThan(2 * DEFAULT_BLOCK_BYTES)
    expect(await store.create('big/x.parquet', body, infoOf(body))).toBe('created')
    expect(await store.stat('big/x.parquet')).toEqual({ sha256: sha256(body), bytes })
    expect(Buffer.from(await store.read('big/x.parquet')).equals(Buffer.concat(body))).toBe(true)
    const blocks = await fixture
      .containerClient()
      .getBlockBlobClient('large/big/x.parquet')
      .getBlockList('committed')
    expect(blocks.committedBlocks?.map((block) => block.size)).toEqual([
      DEFAULT_BLOCK_BYTES,
      DEFAULT_BLOCK_BYTES,
      bytes - 2 * DEFAULT_BLOCK_BYTES,
    ])
    const other = randomChunks(1, 3 * DEFAULT_BLOCK_BYTES)
    expect(await store.create('big/x.parquet', other, infoOf(other))).toBe('exists')
    expect((await store.stat('big/x.parquet'))?.sha256).toBe(sha256(body))
  })

  it("a crashed upload's uncommitted blocks are not listed, have no stat, and do not stop a later create", async () => {
    const store = new AzureBlobStore(fixture.config({ prefix: 'crashed' }), { blockBytes: 1024 })
    await store.open()
    // As a crashed upload of this store leaves them: IDs of the same form and length.
    const leftover = Buffer.from('0123456789abcdef-000000').toString('base64')
    for (const key of ['c/small.jsonl', 'c/large.jsonl'])
      await fixture.containerClient().getBlockBlobClient(`crashed/${key}`).stageBlock(leftover, 'partial', 7)
    expect(await store.list('c/')).toEqual([])
    expect(await store.stat('c/small.jsonl')).toBeUndefined()
    // Azurite's Put Blob counts the staged blocks as a blob; the store still creates it.
    const small = [new TextEncoder().encode('{"a":1}\n')]
    expect(await store.create('c/small.jsonl', small, infoOf(small))).toBe('created')
    const large = randomChunks(2, 1500)
    expect(await store.create('c/large.jsonl', large, infoOf(large))).toBe('created')
    expect(await store.list('c/')).toEqual(['c/large.jsonl', 'c/small.jsonl'])
    expect(Buffer.from(await store.read('c/small.jsonl')).toString()).toBe('{"a":1}\n')
    expect(Buffer.from(await store.read('c/large.jsonl')).equals(Buffer.concat(large))).toBe(true)
    const blocks = await fixture
      .containerClient()
      .getBlockBlobClient('crashed/c/large.jsonl')
      .getBlockList('committed')
    expect(blocks.committedBlocks?.map((block) => block.size)).toEqual([1024, 1024, 952])
  })

  it('writes the checksum, the batch and the content type with the blob, in names Azure accepts', async () => {
    const store = new AzureBlobStore(fixture.config({ prefix: 'meta' }))
    const body = [new TextEncoder().encode('a,b\n')]
    const info = { sha256: sha256(body), contentType: 'text/csv', batch: 'orders ünï/e%1/000000000003/0' }
    expect(await store.create('m/x.csv', body, info)).toBe('created')
    const properties = await fixture.containerClient().getBlockBlobClient('meta/m/x.csv').getProperties()
    expect(properties.contentType).toBe('text/csv')
    expect(properties.metadata).toEqual({
      [SHA256_METADATA]: sha256(body),
      [BATCH_METADATA]: 'orders %C3%BCn%C3%AF/e%251/000000000003/0',
    })
  })

  it('Azurite itself refuses a second Put Blob and Put Block List with If-None-Match: * (409 BlobAlreadyExists)', async () => {
    const raw = fixture.containerClient().getBlockBlobClient('server/once')
    const once = { conditions: { ifNoneMatch: '*' } }
    await raw.upload('first', 5, once)
    await expect(raw.upload('second', 6, once)).rejects.toMatchObject({
      statusCode: 409,
      code: 'BlobAlreadyExists',
    })
    await expect(raw.commitBlockList([], once)).rejects.toMatchObject({
      statusCode: 409,
      code: 'BlobAlreadyExists',
    })
    expect((await raw.downloadToBuffer()).toString()).toBe('first')
  })

  it('open writes nothing', async () => {
    const store = new AzureBlobStore(fixture.config({ prefix: 'opened' }))
    await store.open()
    expect(await store.list('')).toEqual([])
    const all: string[] = []
    for await (const blob of fixture
      .containerClient()
      .listBlobsFlat({ prefix: 'opened', includeUncommitedBlobs: true }))
      all.push(blob.name)
    expect(all).toEqual([])
  })
})
