/**
 * The programmatic config, mirroring the vendor's Python API:
 *
 *   const config = Config.discover()
 *   const src = config.getDataSource('sample')
 *   const sink = config.dataSink('warehouse', 'Postgres', {
 *     connection_string: new EnvRef('WAREHOUSE_URL'),   // written as ${WAREHOUSE_URL}
 *   })
 *   config.pipeline('bikehire', new Pipeline({ dataSource: src, dataSink: sink, chaosMode: true }))
 *   await config.save()
 *
 * Edits go through the YAML document, so `save()` keeps the file's comments and layout. Entries
 * added with `dataSource()` / `dataSink()` are checked against their connector by `save()`, as
 * `skipprd connect` checks its own: a secret field must be an `EnvRef`, never the secret itself.
 */
import { ConfigError } from '@skippr/connector-api'
import type { Env } from '../config/interpolate.js'
import { type ConfigFile, loadConfigFile, validateStructure } from '../config/load.js'
import type { PipelineShape, Section } from '../config/schema.js'
import { type EntryToCheck, validateEntries } from '../connect/validate.js'
import { replaceConfigFile } from '../connect/write.js'
import { PipelineNotFoundError } from '../errors.js'

/** A `data_sources.<name>` or `data_sinks.<name>` entry. */
export interface EntryRef {
  readonly section: Section
  readonly name: string
  /** The connector type, e.g. `Duckdb`. */
  readonly type: string
  /** How pipelines refer to it: `data_sinks.warehouse`. */
  readonly reference: string
}

export interface PipelineOptions {
  readonly dataSource: EntryRef | string
  /** Without a destination the data stays in the WAL. */
  readonly dataSink?: EntryRef | string
  readonly syncFrequencySeconds?: number
  readonly dataDir?: string
  readonly chaosMode?: boolean
  readonly bufferThresholdBytes?: number
  readonly bufferThresholdSeconds?: number
}

/** A variable of the environment (or `.env`), written into the file as `${NAME}`: how secrets are given. */
export class EnvRef {
  constructor(readonly name: string) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new ConfigError(
        `EnvRef('${name}'): a variable name is letters, digits and _, not starting with a digit`,
      )
    }
  }

  toString(): string {
    return `\${${this.name}}`
  }
}

/** Connector fields as skippr.yml holds them: snake_case keys, `EnvRef`s as `${NAME}`. */
export type ConnectorFields = Readonly<Record<string, unknown>>

function toYamlValue(value: unknown): unknown {
  if (value instanceof EnvRef) return value.toString()
  if (Array.isArray(value)) return value.map(toYamlValue)
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, toYamlValue(inner)]))
  }
  return value
}

/** A pipeline definition to add with `config.pipeline(name, pipeline)`. */
export class Pipeline {
  constructor(readonly options: PipelineOptions) {}

  /** The YAML form (snake_case keys, as in skippr.yml). */
  toYaml(): PipelineShape {
    const o = this.options
    const ref = (r: EntryRef | string) => (typeof r === 'string' ? r : r.reference)
    return {
      data_source: ref(o.dataSource),
      ...(o.dataSink !== undefined && { data_sink: ref(o.dataSink) }),
      ...(o.syncFrequencySeconds !== undefined && { sync_frequency_seconds: o.syncFrequencySeconds }),
      ...(o.dataDir !== undefined && { data_dir: o.dataDir }),
      ...(o.chaosMode !== undefined && { chaos_mode: o.chaosMode }),
      ...(o.bufferThresholdBytes !== undefined && { buffer_threshold_bytes: o.bufferThresholdBytes }),
      ...(o.bufferThresholdSeconds !== undefined && { buffer_threshold_seconds: o.bufferThresholdSeconds }),
    }
  }
}

/** A pipeline of a config, ready for `new Session(ref)`. */
export interface PipelineRef {
  readonly config: Config
  readonly name: string
}

export interface DiscoverConfigOptions {
  /** An explicit file (like `--config`). */
  readonly config?: string
  /** Where to look for skippr.yml; default the working directory. */
  readonly cwd?: string
  /** Default process.env. */
  readonly env?: Env
}

export class Config {
  /** Entries added by `dataSource()` / `dataSink()`, checked against their connectors by `save()`. */
  private added: EntryToCheck[] = []

  private constructor(private current: ConfigFile) {}

  /** Finds and loads skippr.yml as the CLI does: `config`, SKIPPR_CONFIG_FILE, then the working directory. */
  static discover(options: DiscoverConfigOptions = {}): Config {
    return new Config(
      loadConfigFile({
        config: options.config,
        cwd: options.cwd ?? process.cwd(),
        env: options.env ?? process.env,
      }),
    )
  }

  /** The loaded file (validated structure, environment, directory). */
  get file(): ConfigFile {
    return this.current
  }

  get path(): string {
    return this.current.path
  }

  getDataSource(name: string): EntryRef {
    return this.entry('data_sources', name)
  }

  getDataSink(name: string): EntryRef {
    return this.entry('data_sinks', name)
  }

  pipelineNames(): string[] {
    return Object.keys(this.current.data.pipelines ?? {})
  }

  getPipeline(name: string): PipelineRef {
    if (!this.current.data.pipelines?.[name])
      throw new PipelineNotFoundError(name, this.current.label, this.pipelineNames())
    return { config: this, name }
  }

  /** Adds or replaces `data_sources.<name>` with a connector of `type` (e.g. `Postgres`) and its fields. */
  dataSource(name: string, type: string, fields: ConnectorFields = {}): EntryRef {
    return this.setEntry('data_sources', name, type, fields)
  }

  /** Adds or replaces `data_sinks.<name>` with a connector of `type` (e.g. `Duckdb`) and its fields. */
  dataSink(name: string, type: string, fields: ConnectorFields = {}): EntryRef {
    return this.setEntry('data_sinks', name, type, fields)
  }

  /** Adds or replaces a pipeline; the file is validated again (references included). */
  pipeline(name: string, pipeline: Pipeline): this {
    this.edit((document) => document.setIn(['pipelines', name], document.createNode(pipeline.toYaml())))
    return this
  }

  /** Writes the file whole or not at all (connect/write.ts); a JSON or TOML file is refused. */
  async save(): Promise<void> {
    await validateEntries(this.current, this.current.document, this.added)
    await replaceConfigFile(this.path, this.current.document.toString())
    this.added = []
  }

  private setEntry(section: Section, name: string, type: string, fields: ConnectorFields): EntryRef {
    const yamlFields = toYamlValue(fields) as Record<string, unknown>
    this.edit((document) => document.setIn([section, name], document.createNode({ [type]: yamlFields })))
    this.added = [
      ...this.added.filter((e) => e.section !== section || e.name !== name),
      { section, name, fields: yamlFields },
    ]
    return this.entry(section, name)
  }

  /** Applies `change` to a copy of the document and keeps it only if the file is still valid. */
  private edit(change: (document: ConfigFile['document']) => void): void {
    const document = this.current.document.clone()
    change(document)
    const data = validateStructure(document.toJS(), this.current.label, this.current.env)
    this.current = { ...this.current, document, data }
  }

  private entry(section: Section, name: string): EntryRef {
    const entry = this.current.data[section]?.[name]
    if (!entry) {
      const known = Object.keys(this.current.data[section] ?? {})
      throw new ConfigError(
        `${this.current.label}: ${section}.${name} is not defined${known.length > 0 ? `: entries are ${known.join(', ')}` : ''}`,
      )
    }
    return { section, name, type: Object.keys(entry)[0] as string, reference: `${section}.${name}` }
  }
}
