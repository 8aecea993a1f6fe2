/**
 * The parts one run of a pipeline is made of, built in the order they depend on each other:
 * the source; the schema registry (the saved schemas, or a discovery); the WAL, resuming where
 * the last committed batch left the source; SHOW STATS's counters; the lander, when there is a
 * destination (ahead of it, its schema sink); and the batch buffer, whose every commit goes to the WAL and then to the lander.
 * pipeline-run.ts runs them. Each part's close is registered in `cleanups` as soon as it is open,
 * so a run that fails halfway closes what it opened (the caller runs them in reverse).
 */
import {
  batchKey,
  ConfigError,
  type ConnectorContext,
  deadletterNamespace,
  type NamespaceSchema,
  type Source,
  type SourceDefinition,
} from '@skippr/connector-api'
import { CountersBuffer, type Lease, type PipelineState } from '@skippr/state'
import { BatchBuffer, type BatchInput, openWal, type ResumePositions, type Wal } from '@skippr/wal'
import type { Logger } from 'pino'
import type { ResolvedConnector } from '../connectors.js'
import { SourceFailedError } from '../errors.js'
import { connectorLogger } from '../logging.js'
import type { ClusterNode } from './cluster-node.js'
import type { RunProgress } from './events.js'
import { Lander } from './lander.js'
import type { PipelineRunOptions } from './pipeline-run.js'
import { SchemaPublisher } from './schema-publisher.js'
import { SchemaRegistry } from './schemas.js'
import { walBackend } from './wal-backend.js'

/**
 * How long counted batches wait for their write to the state store: one write for the batches of
 * the interval instead of two per batch. The counters lag by at most this (never run ahead).
 */
const COUNTERS_INTERVAL_MS = 1_000

/** Batches a destination may hold on the data directory's disk while it lands them. */
const LANDING_BATCHES = 3

/** What a run's parts are built from. */
export interface RunContext {
  readonly state: PipelineState
  readonly options: PipelineRunOptions
  readonly lease: Lease
  readonly runId: string
  readonly logger: Logger
  readonly progress: RunProgress
  /** Reading stops when it aborts (a stop signal, or the run failed): commits waiting at the cap give up. */
  readonly reading: AbortSignal
  /** Fails the run now, aborting `reading` with `error`. */
  readonly fail: (error: unknown) => void
  readonly cleanups: (() => Promise<unknown>)[]
  /** `WAL_STORAGE=clustered`: this node, whose peer lets go of the pipeline's copy when its WAL opens. */
  readonly cluster?: ClusterNode | undefined
}

export interface RunParts {
  readonly source: Source
  readonly schemas: SchemaRegistry
  readonly wal: Wal
  readonly lander: Lander | undefined
  readonly buffer: BatchBuffer
}

/** What the run's connectors are created with. */
export function connectorContext(options: PipelineRunOptions, logger: Logger): ConnectorContext {
  return {
    configDir: options.configDir,
    dataDir: options.settings.dataDir,
    pipeline: options.settings.name,
    logger: connectorLogger(logger),
    meter: options.meter?.(options.settings.name),
  }
}

export async function buildRun(run: RunContext): Promise<RunParts> {
  const { options, cleanups } = run
  const context = connectorContext(options, run.logger)
  const source = await createSource(options.source, context, options.settings.name)
  cleanups.push(() => source.close())
  if (options.once && source.commitWindow) throw pushSourceOnce(options)
  const schemas = await loadSchemas(run, source)
  const wal = await openRunWal(run)
  cleanups.push(() => wal.close())
  // SHOW STATS's counters, written together every COUNTERS_INTERVAL_MS and at the end of the run.
  const counters = new CountersBuffer(run.state.counters, {
    intervalMs: COUNTERS_INTERVAL_MS,
    onError: (error) => run.logger.warn({ err: error }, 'writing the counters failed; trying again'),
  })
  cleanups.push(() => counters.close())
  const publisher = createSchemaPublisher(run, context)
  if (publisher) cleanups.push(() => publisher.close())
  const lander = createLander(run, { wal, schemas, counters, context, source, publisher })
  if (lander) await tellLandedSoFar(run.state, source)
  const buffer = createBuffer(run, { source, wal, counters, lander })
  return { source, schemas, wal, lander, buffer }
}

async function createSource(
  resolved: ResolvedConnector<SourceDefinition>,
  context: ConnectorContext,
  pipeline: string,
): Promise<Source> {
  try {
    return await resolved.definition.create(resolved.config, context)
  } catch (error) {
    throw new SourceFailedError(pipeline, error)
  }
}

/**
 * A push source has nothing to read "now": its clients send for as long as its sync runs. So it runs
 * only in a long-running sync of its own pipeline, not under --once nor in the rounds of an
 * every-pipeline sync (which are runs of --once).
 */
function pushSourceOnce(options: PipelineRunOptions): ConfigError {
  const { settings, source } = options
  return new ConfigError(
    `pipeline '${settings.name}': data_sources.${source.entry} (${source.type}) receives what clients send for as long as its sync runs: run it on its own, \`skipprd sync --pipeline ${settings.name}\` without --once`,
  )
}

async function loadSchemas(run: RunContext, source: Source): Promise<SchemaRegistry> {
  const { logger } = run
  const pipeline = run.options.settings.name
  const schemas = new SchemaRegistry(
    run.state,
    run.lease.token,
    (schema) => discovered(schema, run),
    (previous, next, version) =>
      logger.info(
        { namespace: next.namespace, version, fields_added: next.fields.length - previous.fields.length },
        'schema evolved',
      ),
    deadletterNamespace(pipeline),
  )
  await schemas.load(() =>
    source.discover().catch((error: unknown) => Promise.reject(new SourceFailedError(pipeline, error))),
  )
  return schemas
}

function discovered(schema: NamespaceSchema, run: RunContext): void {
  run.logger.info({ namespace: schema.namespace, field_count: schema.fields.length }, 'namespace discovered')
  run.options.listener({
    type: 'namespace_discovered',
    pipeline: run.options.settings.name,
    runId: run.runId,
    namespace: schema.namespace,
    fieldCount: schema.fields.length,
  })
}

function openRunWal(run: RunContext): Promise<Wal> {
  const { settings, wal: walSettings, sink } = run.options
  return openWal({
    pipeline: settings.name,
    dataDir: settings.dataDir,
    backend: walBackend(settings, run.state, run.cluster?.leader(run.state, run.lease.token)),
    bytesPerFile: walSettings.bytesPerFile,
    maxDelaySeconds: walSettings.maxDelaySeconds,
    positions: resumePositions(run.state, run.lease.token),
    // One batch handed to the lander from memory: the first lands without being read back and
    // checked (about 20 ms of a busy event loop before the destination gets any work). More would
    // hold 10 MB each while they wait behind slower landings.
    keepBatches: 1,
    maxTotalBytes: walSettings.maxTotalBytes,
    // Without a destination nothing lands: at the cap the run stops rather than wait for ever.
    whenFull: sink ? 'wait' : 'fail',
    // Room for landing on a full disk: the WAL's own needs, and load files of the batches a
    // destination lands or holds (the DuckDB sink writes them under the data directory, up to three:
    // packages/sink-duckdb/src/sink.ts).
    keepFreeBatches: sink ? LANDING_BATCHES : 0,
    logger: connectorLogger(run.logger),
  })
}

/** The WAL keeps the resume position here once the batches carrying it are trimmed. */
export function resumePositions(state: PipelineState, fence: bigint): ResumePositions {
  return {
    load: () => state.getResumeOffset(),
    save: (offset) => (offset === undefined ? state.reset() : state.saveResumeOffset(offset, { fence })),
  }
}

function createLander(
  run: RunContext,
  parts: {
    wal: Wal
    schemas: SchemaRegistry
    counters: CountersBuffer
    context: ConnectorContext
    source: Source
    publisher: SchemaPublisher | undefined
  },
): Lander | undefined {
  const { sink, deadletterSink, settings, once } = run.options
  if (!sink) return undefined
  const { context, publisher } = parts
  const openSink = async () => sink.definition.create(sink.config, context)
  return new Lander({
    wal: parts.wal,
    pipeline: settings.name,
    fence: run.lease.token,
    openSink: publisher ? publisher.ahead(openSink) : openSink,
    sinkName: { entry: sink.entry, type: sink.type },
    openDeadletterSink:
      deadletterSink && (async () => deadletterSink.definition.create(deadletterSink.config, context)),
    schemas: parts.schemas,
    progress: run.progress,
    counters: parts.counters,
    landingFailures: run.state.landingFailures,
    logger: run.logger,
    chaos: run.options.chaos,
    retryBudgetMs: once ? run.options.retryBudgetMs : undefined,
    batchBytes: run.options.wal.bufferThresholdBytes,
    landed: parts.source.landed && ((offset) => parts.source.landed?.(offset)),
  })
}

/** The data sink's schema sink, which its tables are published to ahead of the data (schema-publisher.ts). */
function createSchemaPublisher(run: RunContext, context: ConnectorContext): SchemaPublisher | undefined {
  const { sink, schemaSink } = run.options
  return sink && schemaSink && new SchemaPublisher(schemaSink, context, run.logger)
}

/**
 * A push source hears where the last run's landings reached (the saved resume position, written as
 * each batch lands): its clients may wait for a durable ack of records that landed before a restart.
 */
async function tellLandedSoFar(state: PipelineState, source: Source): Promise<void> {
  if (!source.landed) return
  const reached = await state.getResumeOffset()
  if (reached !== undefined) source.landed(reached)
}

/**
 * The buffer's commit: durable in the WAL, then told to the source (a push source answers its
 * clients), counted, and handed to the lander. A push source's commit window shortens the buffer's.
 */
function createBuffer(
  run: RunContext,
  parts: { source: Source; wal: Wal; counters: CountersBuffer; lander: Lander | undefined },
): BatchBuffer {
  const { progress, logger } = run
  const { source, wal, counters, lander } = parts
  const window = source.commitWindow
  const walSettings = run.options.wal
  let waitedForRoom = false
  const waitForRoom = (): void => {
    progress.backpressureStalls++
    logger.debug('the WAL is at WAL_MAX_TOTAL_BYTES: reading waits for landed batches to free room')
    if (!waitedForRoom) source.walFull?.(true)
    waitedForRoom = true
    lander?.sourceWaiting()
  }
  return new BatchBuffer({
    thresholdBytes: Math.min(walSettings.bufferThresholdBytes, window?.maxBytes ?? Number.POSITIVE_INFINITY),
    thresholdSeconds: Math.min(
      walSettings.bufferThresholdSeconds,
      (window?.maxDelayMs ?? Number.POSITIVE_INFINITY) / 1000,
    ),
    // A timer's commit has no read waiting to see it fail (a push source idles between requests):
    // the run fails now, and the source's clients are told, not left waiting for another chunk.
    commit: (batch) =>
      commit(batch).catch((error: unknown) => {
        if (!run.reading.aborted) run.fail(error)
        throw error
      }),
  })

  async function commit(batch: BatchInput): Promise<void> {
    const id = await wal.commit(batch, { signal: run.reading, onFull: waitForRoom })
    if (waitedForRoom) source.walFull?.(false)
    waitedForRoom = false
    if (batch.offset !== undefined) source.committed?.(batch.offset)
    progress.batchCommitted(
      id.seq,
      batch.parts.map((part) => ({
        namespace: part.namespace,
        rows: part.rows,
        bytes: partBytes(part.body),
      })),
    )
    // The batch is durable: counted (written with the interval's others), and the lander may land it.
    await counters.recordCommitted(id, batch.parts)
    lander?.committed()
    const rows = batch.parts.reduce((sum, part) => sum + part.rows, 0)
    logger.debug(
      { batch: batchKey(id), rows, bytes: bodyBytes(batch), offset: batch.offset },
      'batch committed',
    )
    // Without a destination the WAL is where rows are written.
    if (!lander) for (const part of batch.parts) progress.written(part.namespace, part.rows)
    run.options.chaos.at('after-commit', batchKey(id))
  }
}

/** The body bytes of a batch about to be committed (its parts' bodies may be lists of chunks). */
function bodyBytes(batch: BatchInput): number {
  return batch.parts.reduce((sum, part) => sum + partBytes(part.body), 0)
}

function partBytes(body: Uint8Array | readonly Uint8Array[]): number {
  return body instanceof Uint8Array ? body.length : body.reduce((sum, chunk) => sum + chunk.length, 0)
}
