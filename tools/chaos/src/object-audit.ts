/**
 * The object-store check that rows alone cannot show: after the last run, every object in the
 * bucket, container or directory is one the sink's key layout names (object-sink's layout.ts),
 *
 *   <prefix>/<namespace>/<pipeline>/<epoch>/<seq, 12 digits>-<part>.<ext>
 *   <prefix>/_manifests/<pipeline>/<epoch>/<seq, 12 digits>.json      (with manifests)
 *
 * and nothing else is there: no temporary file, no unfinished upload, no key outside the prefix.
 * A batch's parts are numbered 0..n-1, and with manifests each batch has one that lists exactly its
 * objects, each with the bytes, rows and SHA-256 the object has.
 */
import { MANIFESTS, sha256 } from '@skippr/object-sink'
import { EXAMPLES } from './verify.js'

/** What the sink was configured to write. */
export interface ObjectLayout {
  /** The sink's `prefix`, without slashes at either end. */
  readonly prefix: string
  /** The namespace and the pipeline as keys hold them (safe names: these need no encoding). */
  readonly namespace: string
  readonly pipeline: string
  /** The file extension of the sink's encoding: `jsonl`, `csv.gz`, `parquet`. */
  readonly extension: string
  readonly manifest: boolean
}

/** A data object of the layout, parsed from its key (relative to the prefix). */
export interface DataObject {
  readonly key: string
  /** `<pipeline>/<epoch>/<seq>`: connector-api's batchKey. */
  readonly batch: string
  readonly part: number
}

/** The keys found, sorted into the layout's objects and everything else. */
export interface SortedKeys {
  readonly data: readonly DataObject[]
  /** Manifest keys, relative to the prefix, by the batch they name. */
  readonly manifests: ReadonlyMap<string, string>
  /** Keys (from the top) the layout does not name. */
  readonly stray: readonly string[]
}

/** An object as read back: its bytes, and how many rows it holds (0 for a manifest). */
export interface ReadBack {
  readonly bytes: Uint8Array
  readonly rows: number
}

const EPOCH = '[0-9a-f]{16}'
const SEQ = '\\d{12}'

/** Sorts `keys` (every key from the top of the store) into data objects, manifests and strays. */
export function sortKeys(keys: readonly string[], layout: ObjectLayout): SortedKeys {
  const root = layout.prefix === '' ? '' : `${layout.prefix}/`
  const batchPath = `(${escapeRegExp(layout.pipeline)}/${EPOCH}/${SEQ})`
  const dataKey = new RegExp(
    `^${escapeRegExp(layout.namespace)}/${batchPath}-(\\d+)\\.${escapeRegExp(layout.extension)}$`,
  )
  const manifestKey = new RegExp(`^${MANIFESTS}/${batchPath}\\.json$`)
  const data: DataObject[] = []
  const manifests = new Map<string, string>()
  const stray: string[] = []
  for (const key of keys) {
    const relative = key.startsWith(root) ? key.slice(root.length) : undefined
    const asData = relative === undefined ? null : dataKey.exec(relative)
    const asManifest = relative === undefined || !layout.manifest ? null : manifestKey.exec(relative)
    if (asData && relative !== undefined)
      data.push({ key: relative, batch: asData[1] as string, part: Number(asData[2]) })
    else if (asManifest && relative !== undefined) manifests.set(asManifest[1] as string, relative)
    else stray.push(key)
  }
  return { data, manifests, stray }
}

/**
 * Resolves with the problems of the object set: strays, gaps in a batch's parts, and with
 * manifests a batch without one or a manifest untrue to its objects. `read` gives an object's bytes
 * and rows by its key relative to the prefix.
 */
export async function auditObjects(
  sorted: SortedKeys,
  layout: ObjectLayout,
  read: (key: string) => Promise<ReadBack>,
): Promise<string[]> {
  const problems: string[] = []
  if (sorted.stray.length > 0)
    problems.push(`${sorted.stray.length} objects the key layout does not name: ${examples(sorted.stray)}`)
  const batches = partsByBatch(sorted.data)
  const gaps = [...batches].filter(([, parts]) => parts.some((object, i) => object.part !== i))
  if (gaps.length > 0)
    problems.push(
      `batches whose parts are not numbered 0..n-1: ${examples(gaps.map(([batch, parts]) => `${batch} (${parts.map((p) => p.part).join(', ')})`))}`,
    )
  if (layout.manifest) problems.push(...(await auditManifests(sorted, batches, layout, read)))
  return problems
}

/** Each batch's data objects, in part order. */
function partsByBatch(data: readonly DataObject[]): Map<string, DataObject[]> {
  const batches = new Map<string, DataObject[]>()
  for (const object of data) batches.set(object.batch, [...(batches.get(object.batch) ?? []), object])
  for (const parts of batches.values()) parts.sort((a, b) => a.part - b.part)
  return batches
}

interface ManifestEntry {
  readonly key: string
  readonly namespace: string
  readonly rows: number
  readonly bytes: number
  readonly sha256: string
}

async function auditManifests(
  sorted: SortedKeys,
  batches: ReadonlyMap<string, readonly DataObject[]>,
  layout: ObjectLayout,
  read: (key: string) => Promise<ReadBack>,
): Promise<string[]> {
  const problems: string[] = []
  const unlisted = [...batches.keys()].filter((batch) => !sorted.manifests.has(batch))
  if (unlisted.length > 0)
    problems.push(`${unlisted.length} batches without a manifest: ${examples(unlisted)}`)
  for (const [batch, key] of sorted.manifests) {
    const problem = await manifestProblem(batch, key, batches.get(batch) ?? [], layout, read)
    if (problem) problems.push(`manifest ${key}: ${problem}`)
    if (problems.length > EXAMPLES) break
  }
  return problems
}

/** How the manifest differs from the batch's objects as they are; undefined when it lists them truly. */
async function manifestProblem(
  batch: string,
  key: string,
  objects: readonly DataObject[],
  layout: ObjectLayout,
  read: (key: string) => Promise<ReadBack>,
): Promise<string | undefined> {
  let manifest: { batch?: unknown; objects?: ManifestEntry[] }
  try {
    manifest = JSON.parse(new TextDecoder().decode((await read(key)).bytes))
  } catch (error) {
    return `not JSON (${(error as Error).message})`
  }
  if (manifest.batch !== batch) return `names batch ${String(manifest.batch)}, its key says ${batch}`
  const listed = (manifest.objects ?? []).map((entry) => entry.key)
  const stored = objects.map((object) => object.key)
  if (listed.join('\n') !== stored.join('\n'))
    return `lists ${listed.join(', ') || 'nothing'}; the batch's objects are ${stored.join(', ') || 'none'}`
  for (const entry of manifest.objects ?? []) {
    const object = await read(entry.key)
    const actual = {
      namespace: layout.namespace,
      rows: object.rows,
      bytes: object.bytes.length,
      sha256: sha256([object.bytes]),
    }
    for (const field of ['namespace', 'rows', 'bytes', 'sha256'] as const)
      if (entry[field] !== actual[field])
        return `${entry.key} has ${field} ${String(entry[field])}, the object ${actual[field]}`
  }
  return undefined
}

function examples(items: readonly string[]): string {
  const shown = items.slice(0, EXAMPLES).join(', ')
  return items.length > EXAMPLES ? `${shown}, …` : shown
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
