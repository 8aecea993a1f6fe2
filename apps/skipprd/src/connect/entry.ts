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
}
