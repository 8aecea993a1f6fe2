import type { StateBackend, StateItem } from './backend.js'
import { canonicalJson, type JsonValue } from './json.js'
import { type PipelineKeys, parseSchemaKey } from './keys.js'

/** One saved version of a namespace's schema. */
export interface SavedSchema {
  readonly namespace: string
  readonly version: number
  readonly schema: JsonValue
  readonly savedAt: Date
}

type SchemaRecord = { readonly schema: JsonValue; readonly savedAt: number }

/*
 * Each version is its own key, created once with "must not exist" and never changed. The newest
 * version is the highest key: no pointer to keep in step with the versions, so there is nothing
 * to tear if a writer dies between two writes.
 */

/** Saves `schema` as the namespace's newest version unless it equals it; returns that version. */
export async function saveSchema(
  backend: StateBackend,
  keys: PipelineKeys,
  namespace: string,
  schema: JsonValue,
): Promise<number> {
  const wanted = canonicalJson(schema)
  for (;;) {
    const latest = await latestSchema(backend, keys, namespace)
    if (latest !== undefined && canonicalJson(latest.schema) === wanted) return latest.version
    const version = (latest?.version ?? 0) + 1
    const record: SchemaRecord = { schema, savedAt: Date.now() }
    const put = await backend.put(keys.schema(namespace, version), record, { mustNotExist: true })
    if (put.ok) return version
    // Another writer created this version first: compare against it.
  }
}

export async function getSchema(
  backend: StateBackend,
  keys: PipelineKeys,
  namespace: string,
  version?: number,
): Promise<SavedSchema | undefined> {
  if (version === undefined) return latestSchema(backend, keys, namespace)
  const key = keys.schema(namespace, version)
  const entry = await backend.get(key)
  return entry && toSaved(keys, { key, ...entry })
}

/** The newest version of every namespace, by namespace name. */
export async function listSchemas(backend: StateBackend, keys: PipelineKeys): Promise<SavedSchema[]> {
  const newest = new Map<string, SavedSchema>()
  // Keys come in order, so the last one seen per namespace is its newest version.
  for (const item of await backend.list(keys.schemas)) {
    const saved = toSaved(keys, item)
    newest.set(saved.namespace, saved)
  }
  return [...newest.values()]
}

async function latestSchema(
  backend: StateBackend,
  keys: PipelineKeys,
  namespace: string,
): Promise<SavedSchema | undefined> {
  const versions = await backend.list(keys.schemaVersions(namespace))
  const last = versions.at(-1)
  return last && toSaved(keys, last)
}

function toSaved(keys: PipelineKeys, item: StateItem): SavedSchema {
  const { namespace, version } = parseSchemaKey(keys.schemas, item.key)
  const record = item.value as SchemaRecord
  return { namespace, version, schema: record.schema, savedAt: new Date(record.savedAt) }
}
