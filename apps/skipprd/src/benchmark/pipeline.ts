/**
 * skipprd's side of a benchmark round: the bikehire CSV read by the File source into the operator's
 * sink, through the runner `sync --once` uses, in process. The pipeline exists only in memory: a
 * config of its own holding the operator's sink entry as it is, the File source and one pipeline
 * whose data_dir (its WAL and embedded state store) is the benchmark's temporary directory. Nothing
 * else of skippr.yml is taken: its `skippr:` section could put the state in the operator's store.
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import { ConfigError } from '@skippr/connector-api'
import type { Logger } from 'pino'
import { type ConfigFile, validateStructure } from '../config/load.js'
import type { RuntimeFlags } from '../config/settings.js'
import { connectorLogger } from '../logging.js'
import type { Redactor } from '../redact.js'
import { type ResolvedPipeline, resolvePipeline, syncPipeline } from '../runner/session.js'

/** The WAL on disk and the embedded state store, in the pipeline's data_dir, whatever the environment says. */
const LOCAL: RuntimeFlags = { walStorage: 'disk', storeType: 'sled' }

export interface BenchmarkEnvironment {
  readonly file: ConfigFile
  readonly cwd: string
  readonly logger: Logger
  readonly redactor: Redactor
  readonly stop: AbortSignal
}

/** One round's pipeline: its name is also the namespace (the table) it lands in. */
export interface BenchmarkPipeline {
  readonly name: string
  readonly csvFile: string
  readonly dataDir: string
}

/** The operator's `data_sinks.<entry>`, or the config error that lists the entries there are. */
export function requireSinkEntry(file: ConfigFile, entry: string): void {
  const known = Object.keys(file.data.data_sinks ?? {})
  if (known.includes(entry)) return
  throw new ConfigError(
    `${file.label}: --sink ${entry}: no data_sinks.${entry}${known.length > 0 ? `: the entries are ${known.join(', ')}` : ': define the destination under data_sinks'}`,
  )
}

/** The config file holding only the benchmark's pipeline into `data_sinks.<sinkEntry>`. */
function benchmarkFile(file: ConfigFile, sinkEntry: string, pipeline: BenchmarkPipeline): ConfigFile {
  const { name } = pipeline
  const raw = {
    data_sources: {
      [name]: { File: { path: pipeline.csvFile, format: 'csv', namespace: name } },
    },
    data_sinks: { [sinkEntry]: file.data.data_sinks?.[sinkEntry] },
    pipelines: {
      [name]: {
        data_source: `data_sources.${name}`,
        data_sink: `data_sinks.${sinkEntry}`,
        data_dir: pipeline.dataDir,
      },
    },
  }
  // Chaos mode would kill the run it is measuring.
  const env = { ...file.env, SKIPPR_CHAOS_MODE: undefined }
  return { ...file, env, data: validateStructure(raw, file.label, env) }
}

/** A round's pipeline, resolved (its secrets registered for redaction), ready to sync. */
export interface BenchmarkRun {
  readonly resolved: ResolvedPipeline
  /** Syncs the pipeline once; resolves with the rows it landed. */
  sync(): Promise<number>
}

export async function prepareRun(
  environment: BenchmarkEnvironment,
  sinkEntry: string,
  pipeline: BenchmarkPipeline,
): Promise<BenchmarkRun> {
  const runEnvironment = {
    ...environment,
    file: benchmarkFile(environment.file, sinkEntry, pipeline),
    flags: LOCAL,
    listener: () => {},
    announce: () => {},
  }
  const resolved = await resolvePipeline(runEnvironment, pipeline.name, true)
  return {
    resolved,
    async sync() {
      const result = await syncPipeline(runEnvironment, resolved, { once: true, honourFrequency: false })
      return result.status === 'completed' ? result.rowsWritten : 0
    },
  }
}

/** The schema the File source finds in the round's file: the one skipprd's table is made from. */
export async function discoveredSchema(
  resolved: ResolvedPipeline,
  environment: BenchmarkEnvironment,
): Promise<NamespaceSchema> {
  const { source, settings } = resolved
  const created = await source.definition.create(source.config, {
    configDir: environment.file.dir,
    dataDir: settings.dataDir,
    pipeline: settings.name,
    logger: connectorLogger(environment.logger),
  })
  try {
    const [schema] = await created.discover()
    if (!schema) throw new Error(`the File source found no schema in ${settings.name}`)
    return schema
  } finally {
    await created.close()
  }
}
