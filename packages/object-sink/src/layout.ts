/**
 * Where a batch's objects go, a pure function of the batch identity and never of the clock, so a
 * retry after a crash addresses the very same keys:
 *
 *   <namespace>/<pipeline>/<epoch>/<seq, 12 digits>-<part>.<ext>
 *   _manifests/<pipeline>/<epoch>/<seq, 12 digits>.json
 *
 * relative to the store's root. `part` is the part's index in the batch, so the parts of one
 * namespace under two schema versions stay two objects, each with one schema. Names from source
 * data are made safe as one key segment (`safeName`), so no name can add a level.
 */
import type { BatchIdentity } from '@skippr/connector-api'
import { safeName } from '@skippr/file-formats'

export const MANIFESTS = '_manifests'

export function objectKey(namespace: string, id: BatchIdentity, part: number, extension: string): string {
  return `${safeName(namespace)}/${batchPath(id)}-${part}.${extension}`
}

export function manifestKey(id: BatchIdentity): string {
  return `${MANIFESTS}/${batchPath(id)}.json`
}

/** Whether `key` (or a key prefix of two or more levels) is one of `pipeline`'s objects or manifests: the pipeline is always the second level. */
export function isPipelineKey(key: string, pipeline: string): boolean {
  const segments = key.split('/')
  return segments[1] === safeName(pipeline)
}

function batchPath(id: BatchIdentity): string {
  return `${safeName(id.pipeline)}/${safeName(id.epoch)}/${id.seq.toString().padStart(12, '0')}`
}
