/**
 * An object store as a chaos destination (S3, Azure Blob, SFTP: destination-s3.ts,
 * destination-azure-blob.ts, destination-sftp.ts). After the last run every key in the bucket,
 * container or directory is listed from its top, temporary files too, and audited against the key
 * layout (object-audit.ts); every data object is read back as a user downstream would
 * (@skippr/conformance's fileRows: JSON lines, CSV, Parquet through DuckDB) and its rows loaded into
 * the DuckDB mirror, where verify.ts checks every source row exactly once. The sink is
 * overwrite-on-retry: a retry writes the same bytes to the same keys, so the final object set holds
 * no copy.
 */
import { fileRows } from '@skippr/conformance'
import type { ObjectStore } from '@skippr/object-sink'
import { bikehireSchema } from '@skippr/source-sample'
import type { Audit, Destination } from './destination.js'
import { duckdbMirror, mirrorEpochSeconds } from './duckdb-mirror.js'
import { auditObjects, type ObjectLayout, type ReadBack, sortKeys } from './object-audit.js'

/** The rows' column types in the mirror, from the Sample source's schema: CSV and JSON read back as text and numbers. */
const MIRROR_TYPES: Record<string, string> = {
  long: 'BIGINT',
  int: 'INTEGER',
  double: 'DOUBLE',
  timestamp: 'TIMESTAMPTZ',
  string: 'VARCHAR',
}

/** What one kind of store brings: its server, the sink entry, and two ways to look at what landed. */
export interface ObjectServer {
  /** For messages: the store and its server, without credentials. */
  readonly label: string
  /** The `data_sinks` entry: credentials as `${NAME}` references. */
  readonly sink: Record<string, unknown>
  /** The values of those references. */
  readonly env: Record<string, string>
  readonly layout: ObjectLayout
  /** Every key from the top of the bucket, container or directory: temporary files and keys outside the prefix too. */
  allKeys(): Promise<string[]>
  /** A store at the sink's prefix, to read objects back. */
  reader(): ObjectStore
  /** Stops the server and removes what it stored. */
  stop(): Promise<void>
}

interface Collected {
  readonly audit: Audit
  readonly lines: string
}

/** The destination over `server`'s store: its rows through the mirror, its objects through `audit`. */
export function objectDestination(workDir: string, server: ObjectServer): Destination {
  let collected: Promise<Collected> | undefined
  const collect = () => {
    collected ??= collectObjects(server)
    return collected
  }
  const columns = Object.fromEntries(
    bikehireSchema.fields.map((f) => [f.name, MIRROR_TYPES[f.type] ?? 'VARCHAR']),
  )
  const mirror = duckdbMirror(workDir, async () => ({ lines: (await collect()).lines, columns }))
  return {
    label: server.label,
    sink: server.sink,
    env: server.env,
    retriesCopy: false,
    schema: 'main',
    table: 'main."rentals"',
    qualify: (table) => `main."${table}"`,
    epochSeconds: mirrorEpochSeconds,
    query: (sql) => mirror.query(sql),
    audit: async () => (await collect()).audit,
    async dispose() {
      mirror.close()
      await server.stop()
    },
  }
}

/** An object as read back: its bytes, and for a data object its rows as a user downstream decodes them. */
interface Landed {
  readonly bytes: Uint8Array
  readonly records: readonly Record<string, unknown>[]
}

/** Lists, audits and reads back every object once, for both the audit and the mirror. */
async function collectObjects(server: ObjectServer): Promise<Collected> {
  const { layout } = server
  const sorted = sortKeys(await server.allKeys(), layout)
  const store = server.reader()
  try {
    const landed = memoized(async (key: string): Promise<Landed> => {
      const bytes = await store.read(key)
      return { bytes, records: key.startsWith(`${layout.namespace}/`) ? await fileRows(key, bytes) : [] }
    })
    const read = async (key: string): Promise<ReadBack> => {
      const { bytes, records } = await landed(key)
      return { bytes, rows: records.length }
    }
    const problems = await auditObjects(sorted, layout, read)
    const lines: string[] = []
    for (const object of sorted.data)
      for (const record of (await landed(object.key)).records) lines.push(JSON.stringify(record, jsonValue))
    const manifests = layout.manifest ? `, ${sorted.manifests.size} manifests` : ''
    const summary = `${sorted.data.length} data objects of ${lines.length} rows${manifests}, ${sorted.stray.length} others`
    return { audit: { problems, summary }, lines: lines.length > 0 ? `${lines.join('\n')}\n` : '' }
  } finally {
    await store.close()
  }
}

/** Parquet read through DuckDB gives BIGINTs as bigint, which JSON.stringify refuses (Dates turn to ISO text themselves). */
function jsonValue(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}

/** `load` once per key: the audit and the mirror both need every object. */
function memoized<T>(load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const cache = new Map<string, Promise<T>>()
  return (key) => {
    let hit = cache.get(key)
    if (!hit) {
      hit = load(key)
      cache.set(key, hit)
    }
    return hit
  }
}
