/**
 * The XML bodies of S3's answers that the fake S3 server sends (errors, ListObjectsV2 pages and the
 * multipart upload answers), and the one XML body it reads: CompleteMultipartUpload's part list.
 */

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
const NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/'

/** S3's error body; the SDK turns `code` into the error's name. */
export function errorXml(code: string, message: string, resource: string, requestId: string): string {
  return `${DECLARATION}<Error>${element('Code', code)}${element('Message', message)}${element('Resource', resource)}${element('RequestId', requestId)}</Error>`
}

/** One object in a listing. */
export interface ListedObject {
  readonly key: string
  readonly size: number
  readonly etag: string
  readonly lastModified: Date
}

/** One page of ListObjectsV2. */
export interface ListPage {
  readonly bucket: string
  readonly prefix: string
  readonly maxKeys: number
  readonly objects: readonly ListedObject[]
  readonly continuationToken?: string | undefined
  /** Set when more objects follow this page. */
  readonly nextContinuationToken?: string | undefined
}

export function listObjectsV2Xml(page: ListPage): string {
  const contents = page.objects.map(
    (object) =>
      `<Contents>${element('Key', object.key)}${element('LastModified', object.lastModified.toISOString())}${element('ETag', object.etag)}${element('Size', String(object.size))}${element('StorageClass', 'STANDARD')}</Contents>`,
  )
  const tokens = [
    page.continuationToken === undefined ? '' : element('ContinuationToken', page.continuationToken),
    page.nextContinuationToken === undefined
      ? ''
      : element('NextContinuationToken', page.nextContinuationToken),
  ]
  return `${DECLARATION}<ListBucketResult xmlns="${NAMESPACE}">${element('Name', page.bucket)}${element('Prefix', page.prefix)}${element('KeyCount', String(page.objects.length))}${element('MaxKeys', String(page.maxKeys))}${element('IsTruncated', String(page.nextContinuationToken !== undefined))}${tokens.join('')}${contents.join('')}</ListBucketResult>`
}

/** InitiateMultipartUploadResult: the id that the parts and the Complete name. */
export function initiateMultipartUploadXml(bucket: string, key: string, uploadId: string): string {
  return `${DECLARATION}<InitiateMultipartUploadResult xmlns="${NAMESPACE}">${element('Bucket', bucket)}${element('Key', key)}${element('UploadId', uploadId)}</InitiateMultipartUploadResult>`
}

/** CompleteMultipartUploadResult: where the object is, and its ETag. */
export function completeMultipartUploadXml(
  location: string,
  bucket: string,
  key: string,
  etag: string,
): string {
  return `${DECLARATION}<CompleteMultipartUploadResult xmlns="${NAMESPACE}">${element('Location', location)}${element('Bucket', bucket)}${element('Key', key)}${element('ETag', etag)}</CompleteMultipartUploadResult>`
}

/** One unfinished upload in a listing. */
export interface ListedUpload {
  readonly key: string
  readonly uploadId: string
  readonly initiated: Date
}

/** One page of ListMultipartUploads. */
export interface UploadsPage {
  readonly bucket: string
  readonly prefix: string
  readonly keyMarker: string
  readonly uploadIdMarker: string
  readonly maxUploads: number
  readonly uploads: readonly ListedUpload[]
  /** Set when more uploads follow this page: the last upload of the page. */
  readonly next?: ListedUpload | undefined
}

/** ListMultipartUploadsResult: the page's uploads, and the markers of the next page if there is one. */
export function listMultipartUploadsXml(page: UploadsPage): string {
  const uploads = page.uploads.map(
    (upload) =>
      `<Upload>${element('Key', upload.key)}${element('UploadId', upload.uploadId)}${element('StorageClass', 'STANDARD')}${element('Initiated', upload.initiated.toISOString())}</Upload>`,
  )
  const next =
    page.next === undefined
      ? ''
      : `${element('NextKeyMarker', page.next.key)}${element('NextUploadIdMarker', page.next.uploadId)}`
  return `${DECLARATION}<ListMultipartUploadsResult xmlns="${NAMESPACE}">${element('Bucket', page.bucket)}${element('KeyMarker', page.keyMarker)}${element('UploadIdMarker', page.uploadIdMarker)}${next}${element('Prefix', page.prefix)}${element('MaxUploads', String(page.maxUploads))}${element('IsTruncated', String(page.next !== undefined))}${uploads.join('')}</ListMultipartUploadsResult>`
}

/** A part as CompleteMultipartUpload lists it. */
export interface CompletedPart {
  readonly partNumber: number
  readonly etag: string
}

/**
 * The parts a CompleteMultipartUpload body lists, in its order; undefined if the body is not such a
 * list. It reads only what the SDK writes: `<Part>` elements with `<PartNumber>` and `<ETag>`.
 */
export function completedPartsOf(xml: string): CompletedPart[] | undefined {
  if (!/<CompleteMultipartUpload[\s>]/.test(xml)) return undefined
  const parts: CompletedPart[] = []
  for (const [, part = ''] of xml.matchAll(/<Part>([\s\S]*?)<\/Part>/g)) {
    const partNumber = Number(textOf(part, 'PartNumber'))
    const etag = textOf(part, 'ETag')
    if (!Number.isInteger(partNumber) || etag === undefined) return undefined
    parts.push({ partNumber, etag })
  }
  return parts
}

function textOf(xml: string, name: string): string | undefined {
  const text = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1]
  return text === undefined ? undefined : unescapeXml(text)
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** One pass, so that `&amp;quot;` stays `&quot;`; the SDK writes `"` as `&quot;` and `\n` as `&#x0A;`. */
function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (entity, name: string) => {
    if (/^#x/i.test(name)) return String.fromCodePoint(Number.parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)))
    return ENTITIES[name] ?? entity
  })
}

function element(name: string, text: string): string {
  return `<${name}>${escapeXml(text)}</${name}>`
}

function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;')
}
