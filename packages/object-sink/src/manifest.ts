/**
 * A batch's manifest: the objects it consists of, written after all of them and created once, so a
 * reader that sees a manifest knows every object it lists is complete. Its bytes are a pure
 * function of the batch, so a retry produces the same manifest.
 */
import type { BatchIdentity } from '@skippr/connector-api'
import { batchKey } from '@skippr/connector-api'

export interface ManifestEntry {
  readonly key: string
  readonly namespace: string
  readonly rows: number
  readonly bytes: number
  readonly sha256: string
}

export function manifestBody(id: BatchIdentity, objects: readonly ManifestEntry[]): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify({ batch: batchKey(id), objects }, null, 2)}\n`)
}
