/**
 * An `ObjectStore` on an Azure Blob container. Blobs are created with `If-None-Match: *`: on Put
 * Blob for a body up to one block, on Put Block List for a larger one after its blocks are staged,
 * so a blob appears whole and is never replaced (Azure and Azurite honour the condition). The
 * checksum is stored as blob metadata `skippr_sha256`.
 *
 * Blocks a crash leaves staged but uncommitted are invisible (not listed, no properties) and the
 * service discards them after a week, so `open` has nothing to clean up.
 */
import { Readable } from 'node:stream'
import type {
  BlobGetPropertiesResponse,
  BlockBlobClient,
  BlockBlobUploadOptions,
  ContainerClient,
  HttpRequestBody,
  StorageRetryOptions,
} from '@azure/storage-blob'
import type { CreateResult, ObjectInfo, ObjectStore, StoredObject } from '@skippr/object-sink'
import { normalizePrefix, underPrefix } from '@skippr/object-sink'
import { blockIds, blocksOf } from './blocks.js'
import { connectContainer } from './client.js'
import type { AzureBlobSinkConfig } from './config.js'
import { credentialsOf } from './config.js'
import { classify, isAlreadyThere, isBlobNotFound } from './errors.js'
import { checksumOf, metadataOf } from './metadata.js'

const MIB = 1024 * 1024
/** Bodies above it are staged in blocks of this size: few requests, bounded time per request. */
export const DEFAULT_BLOCK_BYTES = 8 * MIB
/** A request that has no answer after this (with the SDK's retries) fails and is retried by the runner. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000
/** Blocks staged at once: enough to fill a link. */
const BLOCKS_AT_ONCE = 4
/** The blob `open` addresses to prove access; never written (see `open`). */
const OPEN_CHECK = '_skippr_open_check'
/** An ETag no blob has: an `If-Match` with it is always refused. */
const NO_SUCH_ETAG = '"0x0"'

export type AzureBlobStoreConfig = Pick<
  AzureBlobSinkConfig,
  'container' | 'prefix' | 'connection_string' | 'account_url' | 'sas_token'
>

/** Limits a user rarely changes; tests shorten them. */
export interface AzureBlobTuning {
  /** The SDK's retry policy; `DEFAULT_RETRY` (three tries, 1 s of waiting) by default. */
  readonly retry?: StorageRetryOptions
  /** Bodies above this are staged as blocks of this size. */
  readonly blockBytes?: number
  /** Each request (a listing: all its pages), with the SDK's retries of it, is abandoned after this. */
  readonly requestTimeoutMs?: number
}

export class AzureBlobStore implements ObjectStore {
  readonly location: string
  readonly createsOnce = true
  private readonly container: ContainerClient
  private readonly containerName: string
  private readonly prefix: string
  private readonly blockBytes: number
  private readonly requestTimeoutMs: number

  constructor(config: AzureBlobStoreConfig, tuning: AzureBlobTuning = {}) {
    const { client, account } = connectContainer(credentialsOf(config), config.container, tuning.retry)
    this.container = client
    this.containerName = config.container
    this.prefix = normalizePrefix(config.prefix)
    this.location = `azure://${account}/${config.container}${this.prefix ? `/${this.prefix}` : ''}`
    this.blockBytes = tuning.blockBytes ?? DEFAULT_BLOCK_BYTES
    this.requestTimeoutMs = tuning.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  }

  /**
   * Proves that the container exists and that the credentials may write and read, without writing:
   * a Put Block List conditioned on an ETag no blob has is checked for the container, the
   * signature and the permission first, and then refused on its condition.
   */
  async open(): Promise<void> {
    try {
      await this.blob(OPEN_CHECK).commitBlockList([], {
        conditions: { ifMatch: NO_SUCH_ETAG },
        abortSignal: this.deadline(),
      })
    } catch (error) {
      if (!isAlreadyThere(error) && !isBlobNotFound(error)) throw this.classify(error)
    }
    try {
      await this.properties(OPEN_CHECK)
    } catch (error) {
      throw this.classify(error)
    }
  }

  async create(key: string, body: readonly Uint8Array[], info: ObjectInfo): Promise<CreateResult> {
    const bytes = byteLength(body)
    if (bytes <= this.blockBytes) {
      if (await this.putOnce(key, body, bytes, info)) return 'created'
      // Azurite's Put Blob counts a crashed upload's uncommitted blocks as a blob; its Put Block
      // List does not. So where the refusal finds nothing committed, the body goes as a block.
      if ((await this.stat(key)) !== undefined) return 'exists'
    } else if ((await this.stat(key)) !== undefined) {
      // A retry of a large object that landed before: its blocks need not travel again.
      return 'exists'
    }
    return (await this.commitOnce(key, body, info)) ? 'created' : 'exists'
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    try {
      const properties = await this.properties(key)
      return properties && { sha256: checksumOf(properties.metadata), bytes: properties.contentLength ?? 0 }
    } catch (error) {
      throw this.classify(error, key)
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = []
    try {
      const blobs = this.container.listBlobsFlat({
        prefix: this.fullName(prefix),
        abortSignal: this.deadline(),
      })
      for await (const blob of blobs) keys.push(this.relative(blob.name))
    } catch (error) {
      throw this.classify(error)
    }
    return keys.sort()
  }

  async read(key: string): Promise<Uint8Array> {
    try {
      return await this.blob(key).downloadToBuffer(0, undefined, { abortSignal: this.deadline() })
    } catch (error) {
      throw this.classify(error, key)
    }
  }

  /** Nothing to release: the SDK keeps no connections of its own beyond Node's keep-alive pool. */
  async close(): Promise<void> {}

  /** Put Blob if none is there: false when the service refuses as one is. */
  private async putOnce(
    key: string,
    body: readonly Uint8Array[],
    bytes: number,
    info: ObjectInfo,
  ): Promise<boolean> {
    try {
      await this.blob(key).upload(requestBody(body), bytes, {
        ...createOptions(info),
        abortSignal: this.deadline(),
      })
      return true
    } catch (error) {
      if (isAlreadyThere(error)) return false
      throw this.classify(error, key)
    }
  }

  /** Stages the body's blocks, then commits them if no blob is there: false when the service refuses as one is. */
  private async commitOnce(key: string, body: readonly Uint8Array[], info: ObjectInfo): Promise<boolean> {
    const blob = this.blob(key)
    const blocks = blocksOf(body, this.blockBytes)
    const ids = blockIds(blocks.length)
    try {
      for (let first = 0; first < blocks.length; first += BLOCKS_AT_ONCE) {
        const staged = blocks.slice(first, first + BLOCKS_AT_ONCE).map((block, i) =>
          blob.stageBlock(ids[first + i] as string, requestBody(block), byteLength(block), {
            abortSignal: this.deadline(),
          }),
        )
        await Promise.all(staged)
      }
      await blob.commitBlockList(ids, { ...createOptions(info), abortSignal: this.deadline() })
      return true
    } catch (error) {
      if (isAlreadyThere(error)) return false
      throw this.classify(error, key)
    }
  }

  /** The blob's properties, or undefined when there is none; the SDK's error otherwise. */
  private async properties(key: string): Promise<BlobGetPropertiesResponse | undefined> {
    try {
      return await this.blob(key).getProperties({ abortSignal: this.deadline() })
    } catch (error) {
      if (isBlobNotFound(error)) return undefined
      throw error
    }
  }

  private blob(key: string): BlockBlobClient {
    return this.container.getBlockBlobClient(this.fullName(key))
  }

  private fullName(key: string): string {
    return underPrefix(this.prefix, key)
  }

  private relative(fullName: string): string {
    return this.prefix ? fullName.slice(this.prefix.length + 1) : fullName
  }

  private deadline(): AbortSignal {
    return AbortSignal.timeout(this.requestTimeoutMs)
  }

  private classify(error: unknown, key?: string): Error {
    const where = key === undefined ? this.location : `${this.location}/${key}`
    return classify(error, { where, container: this.containerName })
  }
}

function createOptions(info: ObjectInfo): BlockBlobUploadOptions {
  return {
    conditions: { ifNoneMatch: '*' },
    metadata: metadataOf(info),
    blobHTTPHeaders: { blobContentType: info.contentType },
  }
}

/** The chunks as one request body, without joining them. */
function requestBody(chunks: readonly Uint8Array[]): HttpRequestBody {
  if (chunks.length <= 1) return chunks[0] ?? new Uint8Array(0)
  // A factory, so that each of the SDK's tries reads the chunks anew: a stream is read only once.
  return () => Readable.from(chunks, { objectMode: false })
}

function byteLength(chunks: readonly Uint8Array[]): number {
  return chunks.reduce((sum, chunk) => sum + chunk.length, 0)
}
