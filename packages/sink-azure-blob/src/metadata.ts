/**
 * What the store writes with each blob, as blob metadata. Azure metadata names must be C#
 * identifiers, so the names have underscores where the S3 sink has hyphens (`skippr-sha256`).
 */
import type { ObjectInfo } from '@skippr/object-sink'

export const SHA256_METADATA = 'skippr_sha256'
export const BATCH_METADATA = 'skippr_batch'

const NOT_HEADER_TEXT = /[^\u0020-\u007e]|%/gu

export function metadataOf(info: ObjectInfo): Record<string, string> {
  return { [SHA256_METADATA]: info.sha256, [BATCH_METADATA]: headerText(info.batch) }
}

/** The checksum written at create; undefined for a blob someone else wrote. */
export function checksumOf(metadata: Record<string, string> | undefined): string | undefined {
  return metadata?.[SHA256_METADATA]
}

/**
 * Metadata travels as HTTP headers, which hold printable ASCII only; a pipeline or epoch name may
 * not, so other characters (and `%`) are percent-encoded as UTF-8.
 */
function headerText(text: string): string {
  return text.replace(NOT_HEADER_TEXT, (ch) =>
    [...new TextEncoder().encode(ch)]
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  )
}
