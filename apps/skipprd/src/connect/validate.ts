/**
 * A connector entry checked as `sync` would check it, before skippr.yml is written: the file's
 * structure, the connector's own schema, secrets only as `${NAME}`. `skipprd connect` and the
 * programmatic `Config.save()` both check their new entries here.
 */
import path from 'node:path'
import { loadEnv } from '../config/env.js'
import { referenceName } from '../config/interpolate.js'
import { type ConfigFile, validateStructure } from '../config/load.js'
import type { Section } from '../config/schema.js'
import { resolveSink, resolveSource } from '../connectors.js'

export interface EntryToCheck {
  readonly section: Section
  readonly name: string
  readonly fields: Readonly<Record<string, unknown>>
}

/**
 * Validates `document`, the file at `file` as it is about to be written, and each of `entries`
 * against its connector. `${NAME}` references in the entries' fields whose variables are not set
 * yet stand for themselves: they must be set by the time `sync` runs.
 */
export async function validateEntries(
  file: { readonly path: string; readonly label: string },
  document: ConfigFile['document'],
  entries: readonly EntryToCheck[],
): Promise<void> {
  const dir = path.dirname(file.path)
  const env: Record<string, string | undefined> = { ...loadEnv(dir, process.env) }
  for (const entry of entries) {
    for (const value of Object.values(entry.fields)) {
      const variable = referenceName(value)
      if (variable !== undefined && env[variable] === undefined) env[variable] = value as string
    }
  }
  const edited: ConfigFile = {
    path: file.path,
    label: file.label,
    dir,
    env,
    document,
    data: validateStructure(document.toJS(), file.label, env),
  }
  for (const entry of entries) {
    await (entry.section === 'data_sources'
      ? resolveSource(edited, entry.name)
      : resolveSink(edited, entry.name))
  }
}
