/**
 * The `connectors` check (each connector type the checked pipelines use has its package installed)
 * and the reachability checks `source:<entry>`, `sink:<entry>`, `schema_sink:<entry>`,
 * `deadletter_sink:<entry>`: the
 * connector is created from its resolved config and its `check()` opens a connection and lets go.
 * An entry two pipelines share is checked once.
 */
import type { Sink, SinkDefinition, Source, SourceDefinition } from '@skippr/connector-api'
import type { Logger } from 'pino'
import type { ConnectorSection } from '../config/schema.js'
import type { PipelineSettings } from '../config/settings.js'
import { packageName, type ResolvedConnector, resolveSink, resolveSource } from '../connectors.js'
import { importPackage } from '../installed-package.js'
import type { Redactor } from '../redact.js'
import { type Check, failed, messageOf, passed } from './check.js'
import { type DoctorConfig, usedEntries } from './config.js'
import { connectorContext, withConnector } from './with-connector.js'

const CHECK_NAMES: Record<ConnectorSection, string> = {
  data_sources: 'source',
  data_sinks: 'sink',
  schema_sinks: 'schema_sink',
  deadletter_sinks: 'deadletter_sink',
}

/** One connector entry the checked pipelines use, resolved or not. */
interface Entry {
  readonly section: ConnectorSection
  readonly name: string
  readonly type: string
  /** The first checked pipeline that uses it: its data dir is the connector's. */
  readonly settings: PipelineSettings
  readonly resolved?: ResolvedConnector<SourceDefinition | SinkDefinition>
  readonly error?: unknown
  /** Its package loads (it may still fail to resolve: an unset variable, a bad field). */
  readonly installed: boolean
}

export async function resolveEntries(config: DoctorConfig, redactor: Redactor): Promise<Entry[]> {
  const entries: Entry[] = []
  for (const settings of config.pipelines) {
    for (const [section, name] of usedEntries(settings)) {
      if (entries.some((e) => e.section === section && e.name === name)) continue
      entries.push(await resolveEntry(config, section, name, settings, redactor))
    }
  }
  return entries
}

async function resolveEntry(
  config: DoctorConfig,
  section: ConnectorSection,
  name: string,
  settings: PipelineSettings,
  redactor: Redactor,
): Promise<Entry> {
  const { file } = config
  const type = Object.keys(file.data[section]?.[name] ?? {})[0] ?? ''
  try {
    const resolved =
      section === 'data_sources' ? await resolveSource(file, name) : await resolveSink(file, name, section)
    redactor.add(resolved.secrets)
    return { section, name, type, settings, resolved, installed: true }
  } catch (error) {
    const installed = await importPackage(packageName(section, type), file.dir).then(
      (module) => module !== undefined,
      () => false,
    )
    return { section, name, type, settings, error, installed }
  }
}

export function connectorsCheck(entries: readonly Entry[]): Check {
  const missing = entries.filter((entry) => !entry.installed)
  if (missing.length > 0)
    return failed('connectors', missing.map((entry) => messageOf(entry.error)).join('; '))
  const packages = [...new Set(entries.map((entry) => packageName(entry.section, entry.type)))]
  return passed('connectors', packages.length === 0 ? 'none used' : `installed: ${packages.join(', ')}`)
}

/** `source:<entry>` and the others, in the order the pipelines use them. */
export async function reachabilityChecks(
  entries: readonly Entry[],
  configDir: string,
  logger: Logger,
): Promise<Check[]> {
  const checks: Check[] = []
  for (const entry of entries) checks.push(await reachability(entry, configDir, logger))
  return checks
}

async function reachability(entry: Entry, configDir: string, logger: Logger): Promise<Check> {
  const name = `${CHECK_NAMES[entry.section]}:${entry.name}`
  if (!entry.installed) return failed(name, 'not checked: its connector package is missing (see connectors)')
  if (entry.resolved === undefined) return failed(name, messageOf(entry.error))
  const context = connectorContext(configDir, entry.settings, logger)
  try {
    const checked = await withConnector<Source | Sink, boolean>(
      entry.resolved,
      context,
      async (connector) => {
        if (connector.check === undefined) return false
        await connector.check()
        return true
      },
    )
    return passed(name, checked ? `${entry.type}: reachable` : `not supported by ${entry.type}`)
  } catch (error) {
    return failed(name, messageOf(error))
  }
}
