/**
 * Finding a connector by its type name: `Duckdb` under `data_sinks` is `@skippr/sink-duckdb`.
 * Packages load lazily (only when a command needs them, so `--help` stays fast), first from the
 * config file's directory — where a user installs the connectors they use — then from skipprd's
 * own dependencies.
 */
import {
  ConfigError,
  type ConnectorDefinition,
  parseConnectorConfig,
  type SinkDefinition,
  type SourceDefinition,
} from '@skippr/connector-api'
import { CONNECTOR_TYPES, type ConnectorKind } from './config/connector-types.js'
import { interpolate, referenceName } from './config/interpolate.js'
import { closest } from './config/issues.js'
import type { ConfigFile } from './config/load.js'
import type { ConnectorSection } from './config/schema.js'
import { secretParts } from './config/secret-parts.js'
import { ConnectorMissingError } from './errors.js'
import { importPackage } from './installed-package.js'

const KIND = {
  data_sources: 'source',
  data_sinks: 'sink',
  deadletter_sinks: 'sink',
  schema_sinks: 'sink',
} as const

/** `Duckdb` → `duckdb`, `GoogleAnalytics` → `google-analytics`. */
export function packageName(section: ConnectorSection, type: string): string {
  const slug = type.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()
  return `@skippr/${KIND[section]}-${slug}`
}

export interface ResolvedConnector<D> {
  readonly entry: string
  readonly type: string
  readonly definition: D
  /** The connector's validated config, `${NAME}` references replaced. */
  readonly config: unknown
  /** Values of its secret fields, for redaction. */
  readonly secrets: readonly string[]
}

export async function resolveSource(
  file: ConfigFile,
  entry: string,
): Promise<ResolvedConnector<SourceDefinition>> {
  return resolveConnector(file, 'data_sources', entry) as Promise<ResolvedConnector<SourceDefinition>>
}

export async function resolveSink(
  file: ConfigFile,
  entry: string,
  section: Exclude<ConnectorSection, 'data_sources'> = 'data_sinks',
): Promise<ResolvedConnector<SinkDefinition>> {
  return resolveConnector(file, section, entry) as Promise<ResolvedConnector<SinkDefinition>>
}

async function resolveConnector(
  file: ConfigFile,
  section: ConnectorSection,
  entry: string,
): Promise<ResolvedConnector<SourceDefinition | SinkDefinition>> {
  const raw = file.data[section]?.[entry]
  if (!raw)
    throw new ConfigError(`${file.label}: ${section}.${entry} is not defined: define it under ${section}`)
  const [type, fields] = Object.entries(raw)[0] as [string, Record<string, unknown> | null]
  const where = `${section}.${entry}.${type}`
  const definition = await loadDefinition(file, section, entry, type)
  checkSecretsAreReferences(definition, fields ?? {}, file.label, where)
  const { value } = interpolate(fields ?? {}, file.env, file.label, where)
  const config = parseConnectorConfig(definition, value, { file: file.label, path: where })
  const secrets = (definition.secretFields ?? [])
    .map((field) => (value as Record<string, unknown>)[field])
    .filter((v): v is string => typeof v === 'string' && v.length > 0)
    .flatMap(secretParts)
  return { entry, type, definition, config, secrets }
}

/** The definition of a sink entry's connector, its config neither checked nor resolved. */
export async function sinkDefinitionOf(
  file: ConfigFile,
  entry: string,
  section: Exclude<ConnectorSection, 'data_sources'> = 'data_sinks',
): Promise<SinkDefinition> {
  const raw = file.data[section]?.[entry]
  if (!raw)
    throw new ConfigError(`${file.label}: ${section}.${entry} is not defined: define it under ${section}`)
  const [type] = Object.keys(raw) as [string]
  return (await loadDefinition(file, section, entry, type)) as SinkDefinition
}

async function loadDefinition(
  file: ConfigFile,
  section: ConnectorSection,
  entry: string,
  type: string,
): Promise<SourceDefinition | SinkDefinition> {
  const name = packageName(section, type)
  const where = `${file.label}: ${section}.${entry}`
  const kind = KIND[section]
  const module = await importPackage(name, file.dir)
  if (module === undefined) throw missingConnector(where, kind, type, name)
  const definition = (module as Record<string, unknown>)[kind] as
    | SourceDefinition
    | SinkDefinition
    | undefined
  if (!definition || definition.kind !== kind)
    throw new ConfigError(`${where}: ${name} does not export a ${kind}: reinstall it or check the type name`)
  if (definition.type !== type)
    throw new ConfigError(`${where}: unknown connector type ${type}: write ${definition.type}`)
  return definition
}

/** A known type's package is to be installed; any other type is a typo of a known one. */
function missingConnector(where: string, kind: ConnectorKind, type: string, name: string): Error {
  const known: readonly string[] = CONNECTOR_TYPES[kind]
  if (known.includes(type)) return new ConnectorMissingError(where, `connector type ${type}`, name)
  const other = kind === 'source' ? 'sink' : 'source'
  const guess = closestType(type, known)
  const hint = guess
    ? ` (did you mean ${guess}?)`
    : (CONNECTOR_TYPES[other] as readonly string[]).includes(type)
      ? ` (${type} is a ${other})`
      : ''
  return new ConfigError(
    `${where}: ${type} is not a ${kind} type skipprd knows${hint}: the ${kind} types are ${known.join(', ')}`,
  )
}

/** The nearest known type, compared without case (`duckDB` → `Duckdb`). */
function closestType(type: string, known: readonly string[]): string | undefined {
  const guess = closest(
    type.toLowerCase(),
    known.map((k) => k.toLowerCase()),
  )
  return known.find((k) => k.toLowerCase() === guess)
}

/** Secret fields must name an environment variable, so no credential sits in skippr.yml. */
function checkSecretsAreReferences(
  definition: ConnectorDefinition<unknown>,
  fields: Record<string, unknown>,
  label: string,
  where: string,
): void {
  for (const field of definition.secretFields ?? []) {
    const value = fields[field]
    if (value === undefined || value === null || referenceName(value) !== undefined) continue
    const variable = `${where.split('.')[1] ?? ''}_${field}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_')
    throw new ConfigError(
      `${label}: ${where}.${field}: a secret must not be written in the file: put it in .env as ${variable}=… and write \${${variable}}`,
    )
  }
}
