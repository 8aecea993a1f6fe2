/**
 * The edit `skipprd connect` makes to skippr.yml, on the YAML document itself so the user's
 * comments and layout stay: the connector entry is added, or its fields updated (a different
 * connector type replaces the entry), and the pipeline points at it.
 */
import type { Document } from 'yaml'
import { isMap } from 'yaml'
import type { Section } from '../config/schema.js'
import { ConnectInvalidError } from '../query/errors.js'

export interface ConnectRequest {
  readonly section: Section
  /** PascalCase connector type, e.g. `Postgres`. */
  readonly type: string
  readonly name: string
  readonly pipeline: string
  readonly fields: Readonly<Record<string, unknown>>
  /** Keys of the `skippr:` section to set, from the workspace flags (`WORKSPACE_FLAGS`). */
  readonly skippr?: Readonly<Record<string, string>>
}

/** The vendor's global workspace flags (commander's option names) and the `skippr:` keys they set. */
export const WORKSPACE_FLAGS = {
  workspace: 'workspace',
  tenant: 'tenant',
  storageMode: 'storage_mode',
  skipprS3Bucket: 'wal_s3_bucket',
} as const

/** The `skippr:` keys that the workspace flags given in `options` set. */
export function skipprKeys(
  options: Partial<Record<keyof typeof WORKSPACE_FLAGS, string>>,
): Record<string, string> {
  const keys: Record<string, string> = {}
  for (const [flag, key] of Object.entries(WORKSPACE_FLAGS)) {
    const value = options[flag as keyof typeof WORKSPACE_FLAGS]
    if (value !== undefined) keys[key] = value
  }
  return keys
}

export const PIPELINE_KEY: Record<Section, 'data_source' | 'data_sink' | 'deadletter_sink'> = {
  data_sources: 'data_source',
  data_sinks: 'data_sink',
  deadletter_sinks: 'deadletter_sink',
}

export function applyConnect(document: Document, request: ConnectRequest): void {
  const { section, type, name, pipeline, fields } = request
  const entry = document.getIn([section, name])
  const existing = isMap(entry) && entry.items.length === 1 ? entry.get(type, true) : undefined
  if (isMap(existing)) {
    for (const [key, value] of Object.entries(fields)) document.setIn([section, name, type, key], value)
  } else {
    document.setIn([section, name], { [type]: { ...fields } })
  }
  if (section === 'data_sinks' && document.getIn(['pipelines', pipeline, 'data_source']) === undefined) {
    throw new ConnectInvalidError(
      `pipeline '${pipeline}' has no data_source yet: add one first with skipprd connect data-source <kind> --pipeline ${pipeline} --name <name> …`,
    )
  }
  document.setIn(['pipelines', pipeline, PIPELINE_KEY[section]], `${section}.${name}`)
  for (const [key, value] of Object.entries(request.skippr ?? {})) document.setIn(['skippr', key], value)
}
