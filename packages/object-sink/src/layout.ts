/**
 * Where a batch's objects go, a pure function of the batch identity (and, with a `partition_by`
 * template, of its commit time as the WAL stored it and its rows), never of the clock, so a retry
 * after a crash addresses the very same keys:
 *
 *   <namespace>/<pipeline>/<epoch>/<seq, 12 digits>-<part>.<ext>
 *   <namespace>/<partition levels>/<pipeline>/<epoch>/<seq, 12 digits>-<part>[-<group>].<ext>
 *   _manifests/<pipeline>/<epoch>/<seq, 12 digits>.json
 *
 * relative to the store's root. `part` is the part's index in the batch, so the parts of one
 * namespace under two schema versions stay two objects, each with one schema; `group` is the index
 * of a part's rows of one set of values, when a template splits parts by row values. The partition
 * levels come right under the namespace, as Hive, Spark and DuckDB look for `key=value` levels
 * under a table's root. Names from source data are made safe as one key segment (`safeName`), so
 * no name can add a level.
 */
import type { BatchIdentity } from '@skippr/connector-api'
import { safeName } from '@skippr/file-formats'

export const MANIFESTS = '_manifests'

/** The levels a template rendered for an object (see partition-template.ts), and its value group. */
export interface Partition {
  /** The rendered levels, `/`-joined: `dt=2026-01-01/country=US`. */
  readonly levels: string
  /** The index of the part's value group; absent when the template takes no row values. */
  readonly group?: number
}

export function objectKey(
  namespace: string,
  id: BatchIdentity,
  part: number,
  extension: string,
  partition?: Partition,
): string {
  const levels = partition === undefined ? '' : `${partition.levels}/`
  const group = partition?.group === undefined ? '' : `-${partition.group}`
  return `${safeName(namespace)}/${levels}${batchPath(id)}-${part}${group}.${extension}`
}

export function manifestKey(id: BatchIdentity): string {
  return `${MANIFESTS}/${batchPath(id)}.json`
}

/**
 * Whether `key` is one of `pipeline`'s objects or manifests, for keys laid out with `depth`
 * partition levels: the pipeline is the level after the namespace and the partition levels
 * (second in a manifest's key). A key prefix ending in `/` that stops above the pipeline's level
 * (`orders/dt=2026-01-01/`) may hold this pipeline's keys, so it is accepted; one that reaches it
 * (`orders/<pipeline>/` without a template) is judged by it.
 */
export function isPipelineKey(key: string, pipeline: string, depth = 0): boolean {
  const segments = key.split('/')
  const at = segments[0] === MANIFESTS ? 1 : 1 + depth
  const isPrefix = key.endsWith('/')
  if (isPrefix && segments.length - 1 <= at) return true
  return segments[at] === safeName(pipeline)
}

function batchPath(id: BatchIdentity): string {
  return `${safeName(id.pipeline)}/${safeName(id.epoch)}/${id.seq.toString().padStart(12, '0')}`
}
