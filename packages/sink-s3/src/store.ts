/**
 * An `ObjectStore` on an S3 bucket. Objects are created with `If-None-Match: *`: on PutObject for
 * a body up to one part, on CompleteMultipartUpload for larger ones, so an object appears whole and
 * is never replaced where the service honours the condition (AWS does; some S3-compatible
 * servers ignore it, and then a retry rewrites the same bytes). The checksum is stored as user
 * metadata `skippr-sha256`.
 */
import { Readable } from 'node:stream'
import type { S3ClientConfig } from '@aws-sdk/client-s3'
import {
  AbortMultipartUploadCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import type { CreateResult, ObjectInfo, ObjectStore, StoredObject } from '@skippr/object-sink'
import { normalizePrefix, underPrefix } from '@skippr/object-sink'
import { nameOf, s3ClientConfig, statusOf } from '@skippr/s3-client'
import type { S3SinkConfig } from './config.js'
import { partSizeBytes } from './config.js'
import { bucketMissing, classify } from './errors.js'

// The SDK warns on stderr, once per process, that its releases from 2027 need Node 22: news for
// whoever upgrades the SDK, not for an operator reading skipprd's one-line errors.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

const SHA256 = 'skippr-sha256'
const BATCH = 'skippr-batch'
/** Parts uploaded at once by a multipart upload: enough to fill a link, few enough to bound memory. */
const PARTS_AT_ONCE = 4

export class S3Store implements ObjectStore {
  readonly location: string
  readonly createsOnce: boolean
  private readonly client: S3Client
  private readonly bucket: string
  private readonly prefix: string
  private readonly partSize: number

  /** `createsOnce`: false for a server known to ignore `If-None-Match` (the tests' s3rver). */
  constructor(config: S3SinkConfig, options: { readonly createsOnce?: boolean } = {}) {
    this.bucket = config.bucket
    this.prefix = normalizePrefix(config.prefix)
    this.location = `s3://${config.bucket}${this.prefix ? `/${this.prefix}` : ''}`
    this.partSize = partSizeBytes(config)
    this.createsOnce = options.createsOnce ?? true
    this.client = new S3Client(clientConfig(config))
  }

  async open(isOwnKey: (key: string) => boolean): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }))
    } catch (error) {
      throw statusOf(error) === 404 ? bucketMissing(error, this.location) : classify(error, this.location)
    }
    await this.abortUnfinishedUploads(isOwnKey)
  }

  async create(key: string, body: readonly Uint8Array[], info: ObjectInfo): Promise<CreateResult> {
    const params = {
      Bucket: this.bucket,
      Key: this.fullKey(key),
      IfNoneMatch: '*',
      ContentType: info.contentType,
      Metadata: { [SHA256]: info.sha256, [BATCH]: info.batch },
    }
    const size = body.reduce((sum, chunk) => sum + chunk.length, 0)
    try {
      if (size <= this.partSize) {
        await this.client.send(new PutObjectCommand({ ...params, Body: join(body), ContentLength: size }))
      } else {
        // On a failed completion the upload's parts are aborted, so none are left to pay for.
        const upload = new Upload({
          client: this.client,
          params: { ...params, Body: Readable.from(body) },
          partSize: this.partSize,
          queueSize: PARTS_AT_ONCE,
          leavePartsOnError: false,
        })
        await upload.done()
      }
      return 'created'
    } catch (error) {
      if (statusOf(error) === 412 || nameOf(error) === 'PreconditionFailed') return 'exists'
      throw classify(error, this.where(key))
    }
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }),
      )
      return { sha256: head.Metadata?.[SHA256], bytes: head.ContentLength ?? 0 }
    } catch (error) {
      if (statusOf(error) === 404 || nameOf(error) === 'NotFound') return undefined
      throw classify(error, this.where(key))
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = []
    let token: string | undefined
    do {
      const page = await this.call(this.location, () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.fullKey(prefix),
            ContinuationToken: token,
          }),
        ),
      )
      for (const object of page.Contents ?? []) if (object.Key) keys.push(this.relative(object.Key))
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token)
    return keys.sort()
  }

  async read(key: string): Promise<Uint8Array> {
    const object = await this.call(this.where(key), () =>
      this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) })),
    )
    if (!object.Body) throw new Error(`${this.where(key)}: the object has no body`)
    return object.Body.transformToByteArray()
  }

  async close(): Promise<void> {
    this.client.destroy()
  }

  /** Multipart uploads of this pipeline a crash left unfinished: their parts are billed until aborted. */
  private async abortUnfinishedUploads(isOwnKey: (key: string) => boolean): Promise<void> {
    let keyMarker: string | undefined
    let uploadIdMarker: string | undefined
    do {
      const page = await this.listUploads(keyMarker, uploadIdMarker)
      if (page === undefined) return
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !isOwnKey(this.relative(upload.Key))) continue
        const { Key, UploadId } = upload
        await this.call(this.location, () =>
          this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId })),
        )
      }
      const more = page.IsTruncated === true
      keyMarker = more ? page.NextKeyMarker : undefined
      uploadIdMarker = more ? page.NextUploadIdMarker : undefined
    } while (keyMarker)
  }

  /** A page of the unfinished uploads under the prefix; undefined from a server that cannot list them (s3rver). */
  private async listUploads(keyMarker: string | undefined, uploadIdMarker: string | undefined) {
    const request = new ListMultipartUploadsCommand({
      Bucket: this.bucket,
      Prefix: this.prefix ? `${this.prefix}/` : undefined,
      KeyMarker: keyMarker,
      UploadIdMarker: uploadIdMarker,
    })
    try {
      return await this.client.send(request)
    } catch (error) {
      if (statusOf(error) === 501) return undefined
      throw classify(error, this.location)
    }
  }

  private async call<T>(where: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request()
    } catch (error) {
      throw classify(error, where)
    }
  }

  private fullKey(key: string): string {
    return underPrefix(this.prefix, key)
  }

  private relative(fullKey: string): string {
    return this.prefix ? fullKey.slice(this.prefix.length + 1) : fullKey
  }

  private where(key: string): string {
    return `${this.location}/${key}`
  }
}

function clientConfig(config: S3SinkConfig): S3ClientConfig {
  return s3ClientConfig({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.force_path_style,
    credentials:
      config.access_key_id !== undefined && config.secret_access_key !== undefined
        ? {
            accessKeyId: config.access_key_id,
            secretAccessKey: config.secret_access_key,
            ...(config.session_token !== undefined && { sessionToken: config.session_token }),
          }
        : undefined,
  })
}

function join(chunks: readonly Uint8Array[]): Uint8Array {
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks)
}
