/**
 * Finding and reading skippr.yml: the file's structure, its `.env` files and the references
 * between its sections are checked here; each connector's own fields are checked when the
 * connector is resolved (connectors.ts), because only its package knows them.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import { safeParse } from 'valibot'
import { type Document, parseDocument } from 'yaml'
import { ConfigNotFoundError } from '../errors.js'
import { loadEnv } from './env.js'
import { type Env, interpolate } from './interpolate.js'
import { closest, issueToError } from './issues.js'
import { type FileShape, fileSchema, SECTIONS, type Section } from './schema.js'

export const DEFAULT_FILE_NAMES = ['skippr.yml', 'skippr.yaml'] as const

export interface ConfigFile {
  /** Absolute path of skippr.yml. */
  readonly path: string
  /** How messages name the file: as the user gave it, or relative to the working directory. */
  readonly label: string
  /** Relative paths in the file resolve against this directory. */
  readonly dir: string
  /** Process environment over `.env.local` over `.env`. */
  readonly env: Env
  readonly document: Document
  /** Validated structure. Pipelines and `skippr:` are interpolated; connector fields are raw. */
  readonly data: FileShape
}

export interface LocateOptions {
  /** `--config`. */
  readonly config?: string | undefined
  readonly cwd: string
  readonly env: Env
}

/** `--config`, then `SKIPPR_CONFIG_FILE`, then skippr.yml / skippr.yaml in the working directory. */
export function locateConfig(options: LocateOptions): { path: string; label: string } {
  const given = options.config ?? options.env.SKIPPR_CONFIG_FILE
  if (given) {
    const absolute = path.resolve(options.cwd, given)
    if (!existsSync(absolute)) throw new ConfigNotFoundError(`${given}: no such config file`)
    return { path: absolute, label: given }
  }
  for (const name of DEFAULT_FILE_NAMES) {
    const absolute = path.join(options.cwd, name)
    if (existsSync(absolute)) return { path: absolute, label: name }
  }
  throw new ConfigNotFoundError(`no skippr.yml or skippr.yaml in ${options.cwd}`)
}

export function loadConfigFile(options: LocateOptions): ConfigFile {
  const { path: file, label } = locateConfig(options)
  const dir = path.dirname(file)
  const env = loadEnv(dir, options.env)
  const document = parseYaml(readFileSync(file, 'utf8'), label)
  return { path: file, label, dir, env, document, data: validateStructure(document.toJS(), label, env) }
}

/**
 * A whole-value `${NAME}` is not valid YAML inside a flow mapping (`{ url: ${DB_URL} }`: `{` opens
 * a mapping there), yet it is the documented shape. When the text does not parse as it is, such
 * references are quoted and the text parsed again.
 */
const UNQUOTED_REFERENCE = /(^|[\s,[{])(\$\{[A-Za-z_][A-Za-z0-9_]*\})(?=[ \t]*(?:[,\]}#]|$))/gm

export function parseYaml(text: string, label: string): Document {
  let document = parseDocument(text)
  const quotedText = text.replace(UNQUOTED_REFERENCE, '$1"$2"')
  if (document.errors.length > 0 && quotedText !== text) {
    const quoted = parseDocument(quotedText)
    if (quoted.errors.length === 0) document = quoted
  }
  const error = document.errors[0]
  if (error) {
    const at = error.linePos?.[0]
    const where = at ? `${label}:${at.line}:${at.col}` : label
    throw new ConfigError(`${where}: not valid YAML: ${error.message.split(' at line')[0]}`, { cause: error })
  }
  return document
}

/** Checks the file's shape and cross-references; interpolates everything but connector fields. */
export function validateStructure(raw: unknown, label: string, env: Env): FileShape {
  const result = safeParse(fileSchema, raw ?? {})
  if (!result.success) throw issueToError(result.issues[0], label)
  const data = result.output
  const pipelines: NonNullable<FileShape['pipelines']> = {}
  for (const [name, pipeline] of Object.entries(data.pipelines ?? {})) {
    pipelines[name] = interpolate(pipeline, env, label, `pipelines.${name}`).value as typeof pipeline
    checkReference(data, label, name, 'data_source', 'data_sources', pipelines[name].data_source)
    const sink = pipelines[name].data_sink
    if (sink !== undefined) checkReference(data, label, name, 'data_sink', 'data_sinks', sink)
    const deadletters = pipelines[name].deadletter_sink
    if (deadletters !== undefined)
      checkReference(data, label, name, 'deadletter_sink', 'deadletter_sinks', deadletters)
  }
  const skippr = data.skippr && (interpolate(data.skippr, env, label, 'skippr').value as FileShape['skippr'])
  return { ...data, ...(skippr && { skippr }), pipelines }
}

function checkReference(
  data: FileShape,
  label: string,
  pipeline: string,
  key: string,
  section: Section,
  reference: string,
): void {
  const where = `${label}: pipelines.${pipeline}.${key}`
  const [head, name, ...rest] = reference.split('.')
  const defined = Object.keys(data[section] ?? {})
  if (head !== section || !name || rest.length > 0) {
    const other = SECTIONS.find((s) => s !== section && s === head)
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
