/**
 * Running a pipeline from TypeScript, mirroring the vendor's Python API:
 *
 *   const session = new Session(Config.discover().getPipeline('bikehire'))
 *   const result = await session.sync({ once: true })
 *   const { header, rows } = await session.df()                  // as `skipprd df`
 *   const counted = await session.query('SELECT count(*) FROM bikehire.rentals')
 *   const { ok, checks } = await session.doctor()                // as `skipprd doctor`
 *
 * Logs go to `logs/skipprd.<date>.log` as with the CLI; failures throw the same coded errors.
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import type { Level, Logger } from 'pino'
import { logDirectory, type RuntimeFlags } from '../config/settings.js'
import type { Check } from '../doctor/check.js'
import { createLogger } from '../logging.js'
import type { Cell, StatementResult } from '../query/result.js'
import type { QuerySession } from '../query/sql-session.js'
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

/** What `query()` answers: rows as text (null is SQL NULL), or what an admin statement said. */
export type QueryResult =
  | { readonly kind: 'rows'; readonly header: readonly string[]; readonly rows: Cell[][] }
  | { readonly kind: 'document'; readonly value: unknown }
  | { readonly kind: 'message'; readonly text: string }

/** `df()`: the columns and every row, each value as text (null is SQL NULL). */
export interface Rows {
  readonly header: readonly string[]
  readonly rows: Cell[][]
}

/** `doctor()`: the vendor's `{ ok, checks }`, `ok` false when any check failed. */
export interface DoctorReport {
  readonly ok: boolean
  readonly checks: readonly Check[]
}

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

  /**
   * Runs one statement as `skipprd query --sql` does (SQL over every pipeline's WAL data, or an
   * admin statement) and reads its whole answer. Several statements are refused: call it once each.
   */
  async query(sql: string): Promise<QueryResult> {
    const { splitStatements, isBlank } = await import('../query/statements.js')
    const { complete, rest } = splitStatements(sql)
    const statements = isBlank(rest) ? complete : [...complete, rest.trim()]
    if (statements.length !== 1) {
      throw new RangeError(`query() runs one statement, got ${statements.length}: call it once for each`)
    }
    return this.withQuerySession(async (session) => {
      const result = await session.execute(statements[0] as string)
      if (result.kind !== 'stream') return collect(result)
      await result.chunks[Symbol.asyncIterator]().return?.()
      throw new RangeError(
        'query() reads a whole answer, and STREAM goes on until it is stopped: run it with skipprd query',
      )
    })
  }

  /** The pipeline's rows as `skipprd df` prints them: of `namespace`, or of every namespace in turn. */
  async df(namespace?: string): Promise<Rows> {
    const { pipelineRows } = await import('../query/pipeline-rows.js')
    return this.withQuerySession(async (session) => {
      const result = await pipelineRows(session, this.pipeline.name, namespace)
      const collected = result?.kind === 'rows' ? await collect(result) : undefined
      return collected?.kind === 'rows' ? collected : { header: [], rows: [] }
    })
  }

  /** `skipprd doctor -p <pipeline>`'s checks for this session's config and pipeline. */
  async doctor(): Promise<DoctorReport> {
    const { runDoctor } = await import('../doctor/run.js')
    const { silentPino } = await import('../logging.js')
    const checks = await runDoctor({
      config: this.pipeline.config.path,
      pipeline: this.pipeline.name,
      flags: this.options.flags ?? {},
      cwd: this.cwd,
      logger: silentPino(),
      redactor: this.redactor,
    })
    return { ok: checks.every((check) => check.ok), checks }
  }

  private async withQuerySession<T>(work: (session: QuerySession) => Promise<T>): Promise<T> {
    const { QuerySession } = await import('../query/sql-session.js')
    const { logger } = this.environment(() => {}, undefined)
    const session = await QuerySession.open({
      file: this.pipeline.config.file,
      flags: this.options.flags ?? {},
      cwd: this.cwd,
      warn: (message) => logger.warn(message),
      logger,
      onSecrets: (secrets) => this.redactor.add(secrets),
    })
    try {
      return await work(session)
    } finally {
      await session.close()
    }
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

/** A statement's whole answer, its row chunks read into one list. */
async function collect(result: Exclude<StatementResult, { kind: 'stream' }>): Promise<QueryResult> {
  if (result.kind !== 'rows') return result
  const rows: Cell[][] = []
  for await (const chunk of result.chunks) rows.push(...chunk)
  return { kind: 'rows', header: result.header, rows }
}

/** `discover()` for one pipeline: `await discover(config.getPipeline('bikehire'))`. */
export function discover(pipeline: PipelineRef, options: SessionOptions = {}): Promise<NamespaceSchema[]> {
  return new Session(pipeline, options).discover()
}
