/**
 * The fake S3 server's multipart uploads: the open ones with their parts, the checks S3 makes on the
 * part list that completes one, and the ETags of the completed ones, for a Complete that is repeated.
 */
import { createHash, randomBytes } from 'node:crypto'
import { S3Error } from './s3-error.js'
import type { CompletedPart } from './s3-xml.js'

/** S3's least part size, for every part but the last. */
const MIN_PART_SIZE = 5 * 1024 * 1024
const MAX_PART_NUMBER = 10_000

/** An upload that is open: initiated, and neither completed nor aborted. */
export interface MultipartUpload {
  readonly key: string
  readonly uploadId: string
  readonly initiated: Date
  /** From CreateMultipartUpload: the completed object gets them, as S3 does. */
  readonly metadata: Record<string, string>
  readonly contentType: string | undefined
  /** By part number; a part uploaded again replaces the one before. */
  readonly parts: Map<number, UploadedPart>
}

interface UploadedPart {
  readonly body: Buffer
  readonly md5: Buffer
}

/** The bytes and ETag of the object that completing an upload makes. */
export interface AssembledObject {
  readonly body: Buffer
  readonly etag: string
}

/** The uploads of one bucket, by upload id. */
export class MultipartUploads {
  private readonly open = new Map<string, MultipartUpload>()
  private readonly completed = new Map<string, { readonly key: string; readonly etag: string }>()
  private initiatedCount = 0

  /** Initiates an upload of the object `key`, which will get `metadata` and `contentType`. */
  create(key: string, metadata: Record<string, string>, contentType: string | undefined): MultipartUpload {
    // The count first, zero-padded: the ids of one key sort in the order the uploads were
    // initiated, which is the order S3 lists them in.
    const uploadId = `${String(++this.initiatedCount).padStart(12, '0')}-${randomBytes(8).toString('hex')}`
    const upload = { key, uploadId, initiated: new Date(), metadata, contentType, parts: new Map() }
    this.open.set(uploadId, upload)
    return upload
  }

  /** The open upload of that id on that key, or 404 NoSuchUpload. */
  find(key: string, uploadId: string): MultipartUpload {
    const upload = this.open.get(uploadId)
    if (upload?.key !== key) {
      throw new S3Error(
        404,
        'NoSuchUpload',
        'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
      )
    }
    return upload
  }

  /** The ETag of the object made when this upload was completed; undefined if it was not. */
  completedEtag(key: string, uploadId: string): string | undefined {
    const completed = this.completed.get(uploadId)
    return completed?.key === key ? completed.etag : undefined
  }

  /** Completes an open upload: it is no longer open, and a repeated Complete gets `etag` again. */
  complete(upload: MultipartUpload, etag: string): void {
    this.open.delete(upload.uploadId)
    this.completed.set(upload.uploadId, { key: upload.key, etag })
  }

  /** Aborts an open upload: its parts are dropped. */
  abort(upload: MultipartUpload): void {
    this.open.delete(upload.uploadId)
  }

  /** The open uploads, in no particular order. */
  all(): MultipartUpload[] {
    return [...this.open.values()]
  }
}

/** Stores a part (replacing one of the same number) and returns its ETag: its MD5 in double quotes. */
export function addPart(upload: MultipartUpload, partNumber: number, body: Buffer): string {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
    throw new S3Error(
      400,
      'InvalidArgument',
      `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`,
    )
  }
  const md5 = createHash('md5').update(body).digest()
  upload.parts.set(partNumber, { body, md5 })
  return `"${md5.toString('hex')}"`
}

/**
 * The object that the listed parts make, in their order, with S3's multipart ETag (the MD5 of the
 * parts' MD5s, then `-` and the number of parts); or the error S3 answers for a list that does not
 * fit the upload. The upload is left as it was.
 */
export function assemble(upload: MultipartUpload, listed: readonly CompletedPart[]): AssembledObject {
  const parts = listed.map((entry, index) => {
    const previous = listed[index - 1]
    if (previous !== undefined && entry.partNumber <= previous.partNumber) {
      throw new S3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order.')
    }
    const part = upload.parts.get(entry.partNumber)
    if (part === undefined || unquoted(entry.etag) !== part.md5.toString('hex')) {
      throw new S3Error(
        400,
        'InvalidPart',
        `Part ${entry.partNumber} could not be found, or its ETag does not match the part's.`,
      )
    }
    if (index < listed.length - 1 && part.body.length < MIN_PART_SIZE) {
      throw new S3Error(
        400,
        'EntityTooSmall',
        'Your proposed upload is smaller than the minimum allowed size',
      )
    }
    return part
  })
  const md5OfMd5s = createHash('md5')
    .update(Buffer.concat(parts.map((part) => part.md5)))
    .digest('hex')
  return { body: Buffer.concat(parts.map((part) => part.body)), etag: `"${md5OfMd5s}-${parts.length}"` }
}

/** S3 takes a part's ETag with or without its double quotes. */
function unquoted(etag: string): string {
  return etag.replace(/^"(.*)"$/, '$1')
}
