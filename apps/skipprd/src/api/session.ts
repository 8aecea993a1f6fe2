/**
 * Running a pipeline from TypeScript, mirroring the vendor's Python API:
 *
 *   const session = new Session(Config.discover().getPipeline('bikehire'))
 *   const result = await session.sync({ once: true })
 *
 * Logs go to `logs/skipprd.<date>.log` as with the CLI; failures throw the same coded errors.
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import type { Level, Logger } from 'pino'
import { logDirectory, type RuntimeFlags } from '../config/settings.js'
import { createLogger } from '../logging.js'
import { Redactor } from '../redact.js'
import type { DiscoverEvent } from '../runner/discover.js'
import type { SyncListener } from '../runner/events.js'
import type { PipelineRunResult } from '../runner/pipeline-run.js'
import type { PipelineRef } from './config.js'

export interface SessionOptions {
  /** `--wal-storage`, `--store-type`, … */
  readonly flags?: RuntimeFlags
  /** Relative DATA_DIR resolves against this; default the working directory. */
  readonly cwd?: string
  /** Also print logs to stderr at this level. */
  readonly log?: Level
  /** Use this logger instead of the default file logger. */
  readonly logger?: Logger
}

export interface SyncOptions {
  /** Read what the source has now, land it, and return. Default false: run until `signal` aborts. */
  readonly once?: boolean
  readonly signal?: AbortSignal
  readonly onEvent?: SyncListener
}

export type SyncResult = PipelineRunResult

export class Session {
  private readonly redactor = new Redactor()
  private readonly cwd: string
  private logger: Logger | undefined

  constructor(
    readonly pipeline: PipelineRef,
    private readonly options: SessionOptions = {},
  ) {
    this.cwd = options.cwd ?? process.cwd()
  }

  async sync(options: SyncOptions = {}): Promise<SyncResult> {
    const { resolvePipeline, syncPipeline } = await import('../runner/session.js')
    const environment = this.environment(options.onEvent ?? (() => {}), options.signal)
    const once = options.once === true
    const resolved = await resolvePipeline(environment, this.pipeline.name, once)
    return syncPipeline(environment, resolved, { once, honourFrequency: false })
  }

  /** Reads the source's namespaces and schemas and saves them as the pipeline's schema. */
  async discover(onEvent: (event: DiscoverEvent) => void = () => {}): Promise<NamespaceSchema[]> {
    const [{ resolvePipeline }, { discoverPipeline }] = await Promise.all([
      import('../runner/session.js'),
      import('../runner/discover.js'),
    ])
    const environment = this.environment(() => {}, undefined)
    const pipeline = await resolvePipeline(environment, this.pipeline.name, true)
    return discoverPipeline({
      pipeline,
      configDir: environment.file.dir,
      logger: environment.logger,
      listener: onEvent,
    })
  }

  private environment(listener: SyncListener, signal: AbortSignal | undefined) {
    const file = this.pipeline.config.file
    this.logger ??=
      this.options.logger ??
      createLogger({
        dir: logDirectory(file.env, this.cwd),
        stderrLevel: this.options.log,
        redactor: this.redactor,
      })
    const logger = this.logger
    return {
      file,
      cwd: this.cwd,
      flags: this.options.flags ?? {},
      logger,
      redactor: this.redactor,
      listener,
      stop: signal ?? new AbortController().signal,
      announce: (line: string) => void process.stderr.write(`[skippr] ${this.redactor.redact(line)}\n`),
    }
  }
}

/** `discover()` for one pipeline: `await discover(config.getPipeline('bikehire'))`. */
export function discover(pipeline: PipelineRef, options: SessionOptions = {}): Promise<NamespaceSchema[]> {
  return new Session(pipeline, options).discover()
}
