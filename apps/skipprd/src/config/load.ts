/**
 * Finding and reading the config file: the file's structure, its `.env` files and the references
 * between its sections are checked here; each connector's own fields are checked when the
 * connector is resolved (connectors.ts), because only its package knows them.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import { safeParse } from 'valibot'
import type { Document } from 'yaml'
import { ConfigNotFoundError } from '../errors.js'
import { requireDirectory, statIfAny } from './directories.js'
import { loadEnv } from './env.js'
import { formatOf, parseConfigText } from './formats.js'
import { type Env, interpolate } from './interpolate.js'
import { closest, issueToError } from './issues.js'
import {
  CONNECTOR_SECTIONS,
  type ConnectorEntry,
  type ConnectorSection,
  type FileShape,
  fileSchema,
  IGNORED_SECTIONS,
  RESERVED_PIPELINE_NAMES,
  SCHEMA_SINK_KEY,
} from './schema.js'

export { parseYaml } from './formats.js'

/** Where skipprd looks in the working directory, in this order; the first found is read. */
export const DEFAULT_FILE_NAMES = [
  'skippr.yml',
  'skippr.yaml',
  'skipprd.yml',
  'skipprd.yaml',
  'skipprd.toml',
  'skipprd.json',
] as const

export interface ConfigFile {
  /** Absolute path of the config file. */
  readonly path: string
  /** How messages name the file: as the user gave it, or relative to the working directory. */
  readonly label: string
  /** Relative paths in the file resolve against this directory. */
  readonly dir: string
  /** The process environment with `.env` and `.env.local` (env.ts says which wins). */
  readonly env: Env
  readonly document: Document
  /** Validated structure. Pipelines and `skippr:` are interpolated; connector fields are raw. */
  readonly data: FileShape
  /** What was read but not used (ignored sections, other config files beside it): for the log. */
  readonly notices?: readonly string[]
}

export interface LocateOptions {
  /** `--config`. */
  readonly config?: string | undefined
  readonly cwd: string
  readonly env: Env
}

export interface Located {
  readonly path: string
  readonly label: string
  /** Other default-named files in the same directory, which are not read. */
  readonly shadowed: readonly string[]
}

/** `--config`, then `SKIPPR_CONFIG_FILE`, then the first of DEFAULT_FILE_NAMES in the working directory. */
export function locateConfig(options: LocateOptions): Located {
  const given = options.config ?? options.env.SKIPPR_CONFIG_FILE
  if (given) return locateGiven(given, path.resolve(options.cwd, given))
  const [found, ...shadowed] = defaultFilesIn(options.cwd)
  if (found === undefined) throw new ConfigNotFoundError(`no ${listOf(DEFAULT_FILE_NAMES)} in ${options.cwd}`)
  return { path: path.join(options.cwd, found), label: found, shadowed }
}

function locateGiven(given: string, absolute: string): Located {
  const stats = statIfAny(absolute)
  if (!stats) throw new ConfigNotFoundError(`${given}: no such config file`)
  if (stats.isDirectory()) {
    const inside = defaultFilesIn(absolute)[0]
    const fix = inside
      ? `pass the file in it: --config ${path.join(given, inside)}`
      : `pass the config file's path, e.g. --config ${path.join(given, DEFAULT_FILE_NAMES[0])}`
    throw new ConfigError(`${given}: is a directory, not a config file: ${fix}`)
  }
  return { path: absolute, label: given, shadowed: [] }
}

function defaultFilesIn(dir: string): string[] {
  return DEFAULT_FILE_NAMES.filter((name) => statIfAny(path.join(dir, name))?.isFile())
}

function listOf(names: readonly string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : (names[0] ?? '')
}

export function loadConfigFile(options: LocateOptions): ConfigFile {
  const { path: file, label, shadowed } = locateConfig(options)
  const dir = path.dirname(file)
  const env = loadEnv(dir, options.env)
  if (env.DATA_DIR)
    requireDirectory(path.resolve(options.cwd, env.DATA_DIR), env.DATA_DIR, 'DATA_DIR', 'DATA_DIR')
  const document = parseConfigText(readConfigText(file, label), label, formatOf(file))
  const raw = document.toJS() as Record<string, unknown> | null
  const notices = [
    ...shadowed.map((name) => `${name} is not read: ${label} comes first in the same directory`),
    ...IGNORED_SECTIONS.filter((section) => raw?.[section] !== undefined).map(
      (section) => `${label}: the top-level section ${section} is accepted and ignored by skipprd`,
    ),
  ]
  return { path: file, label, dir, env, document, data: validateStructure(raw, label, env), notices }
}

function readConfigText(file: string, label: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError(`${label}: cannot read the config file: ${(error as Error).message}`, {
      cause: error,
    })
  }
}

/** Checks the file's shape and cross-references; interpolates everything but connector fields. */
export function validateStructure(raw: unknown, label: string, env: Env): FileShape {
  const result = safeParse(fileSchema, raw ?? {})
  if (!result.success) throw issueToError(result.issues[0], label)
  const { dbt: _dbt, vector_sources: _vectorSources, data_sinks: dataSinks, ...parsed } = result.output
  const data: FileShape = { ...parsed, ...(dataSinks && splitSchemaSinks(dataSinks)) }
  for (const [sink, reference] of Object.entries(data.schema_sink_of ?? {}))
    checkReference(
      data,
      `${label}: data_sinks.${sink}.${SCHEMA_SINK_KEY}`,
      SCHEMA_SINK_KEY,
      'schema_sinks',
      reference,
    )
  const pipelines: NonNullable<FileShape['pipelines']> = {}
  for (const [name, pipeline] of Object.entries(data.pipelines ?? {})) {
    refuseReservedName(label, name)
    pipelines[name] = interpolate(pipeline, env, label, `pipelines.${name}`).value as typeof pipeline
    const where = (key: string) => `${label}: pipelines.${name}.${key}`
    checkReference(data, where('data_source'), 'data_source', 'data_sources', pipelines[name].data_source)
    const sink = pipelines[name].data_sink
    if (sink !== undefined) checkReference(data, where('data_sink'), 'data_sink', 'data_sinks', sink)
    const deadletters = pipelines[name].deadletter_sink
    if (deadletters !== undefined)
      checkReference(data, where('deadletter_sink'), 'deadletter_sink', 'deadletter_sinks', deadletters)
  }
  const skippr = data.skippr && (interpolate(data.skippr, env, label, 'skippr').value as FileShape['skippr'])
  return { ...data, ...(skippr && { skippr }), pipelines }
}

/** data_sinks entries as connector entries, and their `schema_sink:` references apart. */
function splitSchemaSinks(
  entries: Record<string, ConnectorEntry & { [SCHEMA_SINK_KEY]?: string }>,
): Pick<FileShape, 'data_sinks' | 'schema_sink_of'> {
  const dataSinks: Record<string, ConnectorEntry> = {}
  const schemaSinkOf: Record<string, string> = {}
  for (const [name, { [SCHEMA_SINK_KEY]: schemaSink, ...connector }] of Object.entries(entries)) {
    dataSinks[name] = connector as ConnectorEntry
    if (schemaSink !== undefined) schemaSinkOf[name] = schemaSink
  }
  return {
    data_sinks: dataSinks,
    ...(Object.keys(schemaSinkOf).length > 0 && { schema_sink_of: schemaSinkOf }),
  }
}

function refuseReservedName(label: string, name: string): void {
  if (!(RESERVED_PIPELINE_NAMES as readonly string[]).includes(name.toLowerCase())) return
  throw new ConfigError(
    `${label}: pipelines.${name}: the name ${name} is reserved (skipprd uses the names ${RESERVED_PIPELINE_NAMES.join(', ')} itself): rename the pipeline`,
  )
}

/** `reference` (written at `where`, under `key`) names an entry of `section`, as `<section>.<name>`. */
function checkReference(
  data: FileShape,
  where: string,
  key: string,
  section: ConnectorSection,
  reference: string,
): void {
  const [head, name, ...rest] = reference.split('.')
  const defined = Object.keys(data[section] ?? {})
  if (head !== section || !name || rest.length > 0) {
    const other = CONNECTOR_SECTIONS.find((s) => s !== section && s === head)
    const hint = other ? ` (${other} entries cannot be used as a ${key})` : ''
    throw new ConfigError(`${where}: '${reference}' must have the form ${section}.<name>${hint}`)
  }
  if (defined.includes(name)) return
  const guess = closest(name, defined)
  const fix = guess
    ? `did you mean ${section}.${guess}?`
    : defined.length > 0
      ? `define it under ${section}, or use one of ${defined.map((d) => `${section}.${d}`).join(', ')}`
      : `define it under ${section}`
  throw new ConfigError(`${where}: ${reference} is not defined: ${fix}`)
}
