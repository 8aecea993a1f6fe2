import { createHash } from 'node:crypto'

/** SHA-256 of the chunks' bytes in order, lowercase hex. */
export function sha256(chunks: readonly Uint8Array[]): string {
  const hash = createHash('sha256')
  for (const chunk of chunks) hash.update(chunk)
  return hash.digest('hex')
}
