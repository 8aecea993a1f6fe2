/**
 * `skipprd connect data-source|data-sink <kind> --pipeline <p> --name <n> --<field> <value>…`:
 * adds or updates a connector entry in skippr.yml and points the pipeline at it. The file is read,
 * changed on its YAML document (comments and layout stay), validated as `sync` would validate it
 * — file structure, the connector's own schema, secrets only as `${NAME}` — and written
 * atomically (temporary file, fsync, rename). Without a skippr.yml one is created.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { hasCode } from '@skippr/connector-api'
import { DEFAULT_FILE_NAMES, locateConfig, parseYaml } from '../config/load.js'
import type { Section } from '../config/schema.js'
import { applyConnect, skipprKeys } from '../connect/entry.js'
import { parseFieldFlags } from '../connect/fields.js'
import { validateEntries } from '../connect/validate.js'
import { readText, replaceConfigFile } from '../connect/write.js'
import { CONFIG_NOT_FOUND } from '../errors.js'
import { CONNECT_INVALID, ConnectInvalidError } from '../query/errors.js'
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, failureLine, type GlobalOptions } from './common.js'

const SECTIONS: Record<string, Section> = { 'data-source': 'data_sources', 'data-sink': 'data_sinks' }

export interface ConnectOptions extends GlobalOptions {
  readonly name?: string
}

export async function connect(
  direction: string,
  kind: string,
  fieldArgs: readonly string[],
  options: ConnectOptions,
): Promise<number> {
  try {
    const section = SECTIONS[direction]
    if (section === undefined) throw new ConnectInvalidError(`'${direction}' is not data-source or data-sink`)
    const pipeline = options.pipeline ?? process.env.PIPELINE_NAME
    if (!pipeline) throw new ConnectInvalidError('connect needs the pipeline: pass --pipeline <name>')
    if (!options.name) throw new ConnectInvalidError('connect needs the entry name: pass --name <name>')
    const request = {
      section,
      type: typeName(kind),
      name: options.name,
      pipeline,
      fields: parseFieldFlags(fieldArgs),
      skippr: skipprKeys(options),
    }

    const target = configTarget(options.config, process.cwd())
    const document = parseYaml(target.exists ? await readText(target.path) : '', target.label)
    applyConnect(document, request)
    await validateEntries(target, document, [request])
    await replaceConfigFile(target.path, String(document))
    process.stdout.write(
      `${section}.${request.name} (${request.type}) is the ${section === 'data_sources' ? 'data_source' : 'data_sink'} of pipeline '${pipeline}' in ${target.label}\n`,
    )
    return EXIT_OK
  } catch (error) {
    process.stderr.write(`${failureLine('connect', error)}\n`)
    return hasCode(error, CONNECT_INVALID) ? EXIT_USAGE : EXIT_FAILURE
  }
}

/** `postgres` / `google-analytics` → `Postgres` / `GoogleAnalytics`; a PascalCase name stays. */
export function typeName(kind: string): string {
  if (/[A-Z]/.test(kind)) return kind
  return kind
    .split(/[-_]/)
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join('')
}

interface Target {
  readonly path: string
  readonly label: string
  readonly exists: boolean
}

/** The config `sync` would read; a new skippr.yml in the working directory when there is none. */
function configTarget(config: string | undefined, cwd: string): Target {
  try {
    return { ...locateConfig({ config, cwd, env: process.env }), exists: true }
  } catch (error) {
    const given = config ?? process.env.SKIPPR_CONFIG_FILE
    if (!hasCode(error, CONFIG_NOT_FOUND)) throw error
    const file = given ? path.resolve(cwd, given) : path.join(cwd, DEFAULT_FILE_NAMES[0])
    return { path: file, label: given ?? DEFAULT_FILE_NAMES[0], exists: existsSync(file) }
  }
}
