/**
 * A small fake S3 server, in this process on 127.0.0.1, for what s3rver lacks: PutObject and
 * CompleteMultipartUpload with `If-None-Match: *`, ListMultipartUploads, and a fault hook for writes
 * that land but look failed. One bucket, path-style URLs (`/<bucket>/<key>`), no signature checks.
 */
import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { decodeAwsChunked, isAwsChunked } from './aws-chunked.js'
import { serveOnLoopback } from './in-process-server.js'
import { addPart, assemble, type MultipartUpload, MultipartUploads } from './multipart-uploads.js'
import { notImplemented, S3Error } from './s3-error.js'
import {
  type CompletedPart,
  completedPartsOf,
  completeMultipartUploadXml,
  errorXml,
  initiateMultipartUploadXml,
  listMultipartUploadsXml,
  listObjectsV2Xml,
} from './s3-xml.js'

/** An object as the fake holds it. */
export interface StoredObject {
  readonly body: Buffer
  /** The `x-amz-meta-*` headers by name without that prefix, lower case (as the SDK's `Metadata`). */
  readonly metadata: Record<string, string>
  readonly contentType: string | undefined
  /**
   * S3's ETag, in double quotes: the body's MD5, or for an object made by a multipart upload the MD5
   * of its parts' MD5s, then `-` and the number of parts.
   */
  readonly etag: string
  readonly lastModified: Date
}

export interface ConditionalS3Options {
  /** The one bucket that exists; `skippr-test` if not given. */
  bucket?: string
  /**
   * Read-only credentials, as a bucket policy granting only s3:GetObject and s3:ListBucket makes
   * them: every PUT, POST and DELETE is refused with 403 AccessDenied.
   */
  readOnly?: boolean
}

export interface ConditionalS3 {
  /** For path-style requests, e.g. `http://127.0.0.1:41234` (set `forcePathStyle` in the SDK). */
  readonly endpoint: string
  readonly region: string
  /** Any credentials pass: the fake does not check signatures. These are for the SDK, which wants some. */
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly bucket: string
  /**
   * The next `count` requests that store an object (PutObject, CompleteMultipartUpload) get no
   * answer: the object is stored, then the connection is destroyed, like a write that landed while
   * the network failed.
   */
  dropNextResponses(count: number): void
  /** A copy of the bucket's contents, by key. */
  objects(): Map<string, StoredObject>
  /** The open multipart uploads, as ListMultipartUploads orders them: by key, then by initiation. */
  uploads(): { key: string; uploadId: string }[]
  /** Closes open connections too. Calling it twice is harmless. */
  stop(): Promise<void>
}

/** The most keys or uploads that S3 lists on one page. */
const MAX_PAGE = 1000
const METADATA_PREFIX = 'x-amz-meta-'

/** Starts the fake with one empty bucket, on a port the OS chooses. */
export async function startConditionalS3(options: ConditionalS3Options = {}): Promise<ConditionalS3> {
  const bucket = new FakeBucket(options.bucket ?? 'skippr-test', options.readOnly ?? false)
  const server = createServer((request, response) => {
    void answer(bucket, request, response)
  })
  const served = await serveOnLoopback(server)
  return {
    endpoint: served.endpoint,
    region: 'us-east-1',
    accessKeyId: 'fake-access-key',
    secretAccessKey: 'fake-secret-key',
    bucket: bucket.name,
    dropNextResponses(count) {
      bucket.responsesToDrop = count
    },
    objects: () => new Map(bucket.objects),
    uploads: () => bucket.openUploads().map(({ key, uploadId }) => ({ key, uploadId })),
    stop: served.stop,
  }
}

/** The bucket's objects and multipart uploads, and the requests on them. */
class FakeBucket {
  readonly objects = new Map<string, StoredObject>()
  readonly uploads = new MultipartUploads()
  responsesToDrop = 0

  constructor(
    readonly name: string,
    readonly readOnly: boolean,
  ) {}

  /** Stores the object unless `If-None-Match: *` finds the key taken; false when the answer is to be dropped. */
  put(key: string, headers: IncomingHttpHeaders, received: Buffer): boolean {
    this.checkCondition(key, headers)
    const body = objectBytes(headers, received)
    return this.store(key, {
      body,
      metadata: metadataOf(headers),
      contentType: single(headers['content-type']),
      etag: `"${createHash('md5').update(body).digest('hex')}"`,
      lastModified: new Date(),
    })
  }

  /**
   * Makes the upload's object from the listed parts, unless `If-None-Match: *` finds the key taken:
   * the upload then stays open, as on AWS. Returns the object's ETag, and false for `answered` when
   * the answer is to be dropped. A Complete repeated after one that succeeded gets the same answer,
   * as moto gives it after AWS: the SDK repeats a Complete whose answer was lost.
   */
  complete(
    key: string,
    uploadId: string,
    headers: IncomingHttpHeaders,
    listed: readonly CompletedPart[],
  ): { etag: string; answered: boolean } {
    const completedEtag = this.uploads.completedEtag(key, uploadId)
    if (completedEtag !== undefined) return { etag: completedEtag, answered: true }
    const upload = this.uploads.find(key, uploadId)
    this.checkCondition(key, headers)
    const { body, etag } = assemble(upload, listed)
    this.uploads.complete(upload, etag)
    const { metadata, contentType } = upload
    return {
      etag,
      answered: this.store(key, { body, metadata, contentType, etag, lastModified: new Date() }),
    }
  }

  /**
   * 412 when `If-None-Match: *` finds the key taken. Callers store right after, with no await
   * between: of two racing writes, exactly one wins.
   */
  private checkCondition(key: string, headers: IncomingHttpHeaders): void {
    if (headers['if-match'] !== undefined) throw notImplemented('If-Match')
    const ifNoneMatch = headers['if-none-match']
    if (ifNoneMatch !== undefined && ifNoneMatch !== '*') throw notImplemented(`If-None-Match other than *`)
    if (ifNoneMatch === '*' && this.objects.has(key)) {
      throw new S3Error(
        412,
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
      )
    }
  }

  /** False when the answer is to be dropped (`dropNextResponses`). */
  private store(key: string, object: StoredObject): boolean {
    this.objects.set(key, object)
    if (this.responsesToDrop === 0) return true
    this.responsesToDrop--
    return false
  }

  get(key: string): StoredObject {
    const object = this.objects.get(key)
    if (!object) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.')
    return object
  }

  /** One ListObjectsV2 page: `prefix`, `max-keys`, `continuation-token` and `start-after` apply. */
  list(query: URLSearchParams): string {
    if (query.has('delimiter')) throw notImplemented('ListObjectsV2 with a delimiter')
    const prefix = query.get('prefix') ?? ''
    const maxKeys = pageSize(query, 'max-keys')
    const continuationToken = query.get('continuation-token') ?? undefined
    const after =
      continuationToken === undefined
        ? (query.get('start-after') ?? '')
        : Buffer.from(continuationToken, 'base64url').toString()
    const keys = [...this.objects.keys()]
      .filter((key) => key.startsWith(prefix) && compareKeys(key, after) > 0)
      .sort(compareKeys)
    const page = keys.slice(0, maxKeys)
    const last = page.at(-1)
    return listObjectsV2Xml({
      bucket: this.name,
      prefix,
      maxKeys,
      continuationToken,
      nextContinuationToken:
        keys.length > page.length && last !== undefined ? Buffer.from(last).toString('base64url') : undefined,
      objects: page.map((key) => {
        const { body, etag, lastModified } = this.objects.get(key)!
        return { key, size: body.length, etag, lastModified }
      }),
    })
  }

  /** One ListMultipartUploads page: `prefix`, `key-marker`, `upload-id-marker` and `max-uploads` apply. */
  listUploads(query: URLSearchParams): string {
    if (query.has('delimiter')) throw notImplemented('ListMultipartUploads with a delimiter')
    const prefix = query.get('prefix') ?? ''
    const keyMarker = query.get('key-marker') ?? ''
    // S3 ignores the upload id marker without a key marker.
    const uploadIdMarker = keyMarker === '' ? '' : (query.get('upload-id-marker') ?? '')
    const maxUploads = pageSize(query, 'max-uploads')
    const uploads = this.openUploads().filter(
      (upload) => upload.key.startsWith(prefix) && isAfterMarkers(upload, keyMarker, uploadIdMarker),
    )
    const page = uploads.slice(0, maxUploads)
    return listMultipartUploadsXml({
      bucket: this.name,
      prefix,
      keyMarker,
      uploadIdMarker,
      maxUploads,
      uploads: page,
      next: uploads.length > page.length ? page.at(-1) : undefined,
    })
  }

  /** By key, then by initiation, which is the order of the upload ids of one key. */
  openUploads(): MultipartUpload[] {
    return this.uploads.all().sort((a, b) => compareKeys(a.key, b.key) || compareKeys(a.uploadId, b.uploadId))
  }
}

/** An answer to send, or none: the connection is destroyed instead. */
type Reply = { status: number; headers?: Record<string, string | number>; body?: string | Buffer } | 'drop'

async function answer(bucket: FakeBucket, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const requestId = randomUUID()
  const url = new URL(request.url ?? '/', 'http://fake')
  let reply: Reply
  try {
    reply = await replyTo(bucket, request, url)
  } catch (error) {
    const { status, code, message } =
      error instanceof S3Error ? error : new S3Error(500, 'InternalError', String(error))
    reply = {
      status,
      headers: { 'content-type': 'application/xml' },
      body: errorXml(code, message, url.pathname, requestId),
    }
  }
  if (reply === 'drop') {
    request.socket.destroy()
    return
  }
  // Node leaves the body out of answers to HEAD.
  response.writeHead(reply.status, { 'x-amz-request-id': requestId, ...reply.headers }).end(reply.body)
}

const WRITES = new Set(['PUT', 'POST', 'DELETE'])

async function replyTo(bucket: FakeBucket, request: IncomingMessage, url: URL): Promise<Reply> {
  const [bucketName, key] = bucketAndKey(url.pathname)
  if (bucketName === '') throw notImplemented('ListBuckets')
  if (bucketName !== bucket.name)
    throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist')
  if (bucket.readOnly && WRITES.has(request.method ?? ''))
    throw new S3Error(403, 'AccessDenied', 'Access Denied')
  const query = url.searchParams
  const operation = operationOf(request.method, key, query)
  switch (operation) {
    case 'HEAD bucket':
      return { status: 200 }
    case 'GET bucket':
      if (query.get('list-type') !== '2') throw notImplemented('This bucket operation')
      return xmlReply(bucket.list(query))
    case 'GET bucket ?uploads':
      return xmlReply(bucket.listUploads(query))
    case 'PUT object': {
      if (request.headers['x-amz-copy-source'] !== undefined) throw notImplemented('CopyObject')
      const answered = bucket.put(key, request.headers, await readBody(request))
      return answered ? { status: 200, headers: { etag: bucket.get(key).etag } } : 'drop'
    }
    case 'GET object':
    case 'HEAD object': {
      if (request.headers.range !== undefined) throw notImplemented('Range')
      const object = bucket.get(key)
      return { status: 200, headers: objectHeaders(object), body: object.body }
    }
    case 'DELETE object':
      bucket.objects.delete(key)
      return { status: 204 }
    case 'POST object ?uploads': {
      const { headers } = request
      const upload = bucket.uploads.create(key, metadataOf(headers), single(headers['content-type']))
      return xmlReply(initiateMultipartUploadXml(bucket.name, key, upload.uploadId))
    }
    case 'PUT object ?uploadId': {
      if (request.headers['x-amz-copy-source'] !== undefined) throw notImplemented('UploadPartCopy')
      const body = objectBytes(request.headers, await readBody(request))
      const upload = bucket.uploads.find(key, uploadIdOf(query))
      return { status: 200, headers: { etag: addPart(upload, Number(query.get('partNumber')), body) } }
    }
    case 'POST object ?uploadId':
      return completeUpload(bucket, request, url, key)
    case 'DELETE object ?uploadId':
      bucket.uploads.abort(bucket.uploads.find(key, uploadIdOf(query)))
      return { status: 204 }
    default:
      throw notImplemented(operation)
  }
}

/** CompleteMultipartUpload: the body lists the parts that make the object. */
async function completeUpload(
  bucket: FakeBucket,
  request: IncomingMessage,
  url: URL,
  key: string,
): Promise<Reply> {
  const listed = completedPartsOf((await readBody(request)).toString())
  if (listed === undefined || listed.length === 0) {
    throw new S3Error(
      400,
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema',
    )
  }
  const { etag, answered } = bucket.complete(key, uploadIdOf(url.searchParams), request.headers, listed)
  if (!answered) return 'drop'
  const location = `http://${request.headers.host}${url.pathname}`
  return xmlReply(completeMultipartUploadXml(location, bucket.name, key, etag))
}

/**
 * What a request asks for, by its method, what its path names and its multipart query parameter,
 * e.g. `POST object ?uploadId` (CompleteMultipartUpload) or `GET bucket` (ListObjectsV2).
 */
function operationOf(method: string | undefined, key: string, query: URLSearchParams): string {
  const target = key === '' ? 'bucket' : 'object'
  const multipart = query.has('uploads') ? ' ?uploads' : query.has('uploadId') ? ' ?uploadId' : ''
  return `${method} ${target}${multipart}`
}

function uploadIdOf(query: URLSearchParams): string {
  return query.get('uploadId') ?? ''
}

function xmlReply(body: string): Reply {
  return { status: 200, headers: { 'content-type': 'application/xml' }, body }
}

/** `/<bucket>/<key…>`, decoded; the key may hold slashes. */
function bucketAndKey(pathname: string): [string, string] {
  const [, bucket = '', ...key] = pathname.split('/')
  return [decodeURIComponent(bucket), decodeURIComponent(key.join('/'))]
}

function objectHeaders(object: StoredObject): Record<string, string | number> {
  const metadata = Object.entries(object.metadata).map(([name, value]) => [
    `${METADATA_PREFIX}${name}`,
    value,
  ])
  return {
    'content-length': object.body.length,
    'content-type': object.contentType ?? 'binary/octet-stream',
    etag: object.etag,
    'last-modified': object.lastModified.toUTCString(),
    ...Object.fromEntries(metadata),
  }
}

function metadataOf(headers: IncomingHttpHeaders): Record<string, string> {
  const entries = Object.entries(headers).filter(([name]) => name.startsWith(METADATA_PREFIX))
  return Object.fromEntries(
    entries.map(([name, value]) => [name.slice(METADATA_PREFIX.length), single(value)!]),
  )
}

/** The bytes of a PutObject or UploadPart body, without the framing of the SDK's aws-chunked encoding. */
function objectBytes(headers: IncomingHttpHeaders, received: Buffer): Buffer {
  if (!isAwsChunked(headers)) return received
  try {
    return decodeAwsChunked(received)
  } catch (error) {
    throw new S3Error(400, 'IncompleteBody', (error as Error).message)
  }
}

/** A page size, `max-keys` or `max-uploads`: at most S3's 1000, which is also the default. */
function pageSize(query: URLSearchParams, name: string): number {
  const size = Math.min(Number(query.get(name) ?? MAX_PAGE), MAX_PAGE)
  if (!Number.isInteger(size) || size < 0) throw new S3Error(400, 'InvalidArgument', `Bad ${name}`)
  return size
}

/** After the markers of a ListMultipartUploads page: a later key, or the marker's key and a later upload. */
function isAfterMarkers(upload: MultipartUpload, keyMarker: string, uploadIdMarker: string): boolean {
  const byKey = compareKeys(upload.key, keyMarker)
  return (
    byKey > 0 || (byKey === 0 && uploadIdMarker !== '' && compareKeys(upload.uploadId, uploadIdMarker) > 0)
  )
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value
}

/** S3 lists keys in the order of their UTF-8 bytes. */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
