/**
 * The `env` check: every `${NAME}` the checked pipelines use resolves — in `skippr:`, in the
 * pipelines themselves, and in the connector entries they point at — from the environment, `.env`
 * or `.env.local` beside the config file. Entries no checked pipeline uses are left alone, as a
 * sync leaves them.
 */
import { referenceName } from '../config/interpolate.js'
import { type Check, failed, passed } from './check.js'
import { type DoctorConfig, usedEntries } from './config.js'

interface Reference {
  readonly variable: string
  /** Where in the file, e.g. `data_sinks.pg.Postgres.connection_string`. */
  readonly where: string
}

export function envCheck(config: DoctorConfig): Check {
  const { file, standIns } = config
  const references = usedParts(config).flatMap(([where, value]) => referencesIn(value, where))
  const missing = references.filter(({ variable }) => standIns.has(variable) || !file.env[variable])
  if (missing.length === 0) {
    const count = new Set(references.map((r) => r.variable)).size
    return passed(
      'env',
      count === 0
        ? `no \${NAME} references`
        : `${count} \${NAME} ${count === 1 ? 'reference resolves' : 'references resolve'}`,
    )
  }
  const names = [...new Set(missing.map((r) => r.variable))]
  const listed = missing.map((r) => `${r.where}: \${${r.variable}}`).join(', ')
  const fix = names.map((name) => `${name}=…`).join(' ')
  const them = names.length === 1 ? 'it' : 'them'
  const later =
    standIns.size > 0 ? `; the pipeline checks run once ${them === 'it' ? 'it is' : 'they are'} set` : ''
  return failed(
    'env',
    `${file.label}: ${listed}: no value in the environment: export ${fix}, or set ${them} in .env beside ${file.label}${later}`,
  )
}

/** The raw parts of the file the checked pipelines read, each with its path in the file. */
function usedParts(config: DoctorConfig): [string, unknown][] {
  const raw = (config.file.document.toJS() ?? {}) as Record<string, Record<string, unknown> | undefined>
  const parts: [string, unknown][] = [['skippr', raw.skippr]]
  const entries = new Set<string>()
  for (const settings of config.pipelines) {
    parts.push([`pipelines.${settings.name}`, raw.pipelines?.[settings.name]])
    for (const [section, entry] of usedEntries(settings)) {
      const where = `${section}.${entry}`
      if (entries.has(where)) continue
      entries.add(where)
      parts.push([where, raw[section]?.[entry]])
    }
  }
  return parts
}

function referencesIn(value: unknown, where: string): Reference[] {
  const variable = referenceName(value)
  if (variable !== undefined) return [{ variable, where }]
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, item]) => referencesIn(item, `${where}.${key}`))
}
