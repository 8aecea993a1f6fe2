import { existsSync } from 'node:fs'
import * as storageBlob from '@azure/storage-blob'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AzuriteServer, startAzurite } from '../src/index.js'
import { pidsWithArgument, refusesConnections } from './processes.js'

const { BlobServiceClient, StorageSharedKeyCredential } = storageBlob

describe('Azurite', () => {
  let azurite: AzuriteServer
  beforeAll(async () => {
    azurite = await startAzurite()
  }, 60_000)
  afterAll(async () => {
    await azurite?.stop()
  })

  it('gives a connection string that names the account, key and endpoint', () => {
    expect(azurite.blobEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/)
    expect(azurite.connectionString).toBe(
      `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${azurite.accountKey};BlobEndpoint=${azurite.blobEndpoint};`,
    )
  })

  it('stores, lists and returns blobs with metadata through the Azure SDK', async () => {
    const container = BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient(
      'events',
    )
    await container.create()
    const blob = container.getBlockBlobClient('2026/part-0.json')
    await blob.upload('{"n":1}', 7, { metadata: { rows: '1' } })
    const names: string[] = []
    for await (const item of container.listBlobsFlat({ prefix: '2026/' })) names.push(item.name)
    expect(names).toEqual(['2026/part-0.json'])
    expect((await blob.getProperties()).metadata).toEqual({ rows: '1' })
    expect((await blob.downloadToBuffer()).toString()).toBe('{"n":1}')
  })

  it('accepts the account name and key as a shared key credential', async () => {
    const credential = new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey)
    const service = new BlobServiceClient(azurite.blobEndpoint, credential)
    const names: string[] = []
    for await (const container of service.listContainers()) names.push(container.name)
    expect(names).toContain('events')
  })

  it('refuses a wrong account key', async () => {
    const credential = new StorageSharedKeyCredential(
      azurite.accountName,
      Buffer.from('wrong').toString('base64'),
    )
    const service = new BlobServiceClient(azurite.blobEndpoint, credential)
    await expect(service.getContainerClient('events').exists()).rejects.toMatchObject({ statusCode: 403 })
  })

  it('leaves no process, port or dir behind after stop', async () => {
    const port = String(new URL(azurite.blobEndpoint).port)
    expect(pidsWithArgument(port)).toHaveLength(1)
    await azurite.stop()
    expect(await refusesConnections(Number(port))).toBe(true)
    expect(pidsWithArgument(port)).toEqual([])
    expect(existsSync(azurite.dir)).toBe(false)
    await azurite.stop()
  })
})
