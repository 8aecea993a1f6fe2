/**
 * One sync of one pipeline (the README's "Commands" and "The guarantee"), in this sequence:
 *
 * 1. skip it if disabled (before touching the source), or — when every pipeline is synced — if it
 *    ran within its sync_frequency_seconds;
 * 2. take the writer lease (its token fences every write);
 * 3. load the saved schema, or discover and save it;
 * 4. open the WAL; the lander starts landing what earlier runs committed, in order;
 * 5. read the source from the WAL's resume offset, buffer, commit each flush (fsync) — and only
 *    then may the source position advance — while the lander lands committed batches. At
 *    WAL_MAX_TOTAL_BYTES a commit, and so reading, waits for landings to free room. A full disk
 *    stops reading for good; what was committed still lands, then the run fails naming the disk;
 * 6. with --once, drain: every committed batch lands, or the run exits 1 and they stay in the WAL.
 *    Without it, run until stopped, then commit the buffer, land for up to STOP_GRACE_MS and release
 *    the lease.
 */
import { randomUUID } from 'node:crypto'
import {
  batchKey,
  type ConnectorContext,
  deadletterNamespace,
  hasCode,
  type NamespaceSchema,
  type SinkDefinition,
  type Source,
  type SourceDefinition,
} from '@skippr/connector-api'
import {
  CountersBuffer,
  isLocalOwnerGone,
  LEASE_UNAVAILABLE,
  type Lease,
  type LeaseUnavailableError,
  type LeaseWatch,
  localOwnerId,
  type PipelineState,
} from '@skippr/state'
import {
  BatchBuffer,
  type BatchInput,
  openWal,
  type ResumePositions,
  type Wal,
  type WalDiskFullError,
  type WalSettings,
} from '@skippr/wal'
import type { Logger } from 'pino'
import type { Env } from '../config/interpolate.js'
import type { PipelineSettings } from '../config/settings.js'
import type { ResolvedConnector } from '../connectors.js'
import { InterruptedError, SourceFailedError } from '../errors.js'
import { connectorLogger } from '../logging.js'
import type { Chaos } from './chaos.js'
import { deadletterChunk } from './deadletters.js'
import { RunProgress, type SkipReason, type SyncListener } from './events.js'
import { Lander } from './lander.js'
import { SchemaRegistry } from './schemas.js'
import { openPipelineStore } from './state-store.js'
import { walBackend } from './wal-backend.js'

/** How long a stopped long-running sync goes on landing the batches it committed. */
const STOP_GRACE_MS = 10_000
export interface PipelineRunOptions {
  readonly settings: PipelineSettings
  /** Buffer thresholds and WAL file settings, resolved from skippr.yml and the environment. */
  readonly wal: WalSettings
  readonly source: ResolvedConnector<SourceDefinition>
  readonly sink: ResolvedConnector<SinkDefinition> | undefined
  readonly deadletterSink: ResolvedConnector<SinkDefinition> | undefined
  readonly configDir: string
  readonly env: Env
  readonly once: boolean
  /** Every-pipeline mode: skip a pipeline that ran within its sync_frequency_seconds. */
  readonly honourFrequency: boolean
  readonly logger: Logger
  readonly listener: SyncListener
  /** Aborted on SIGINT/SIGTERM: stop cleanly. Its reason names the signal. */
  readonly stop: AbortSignal
  readonly chaos: Chaos
  /** With --once, how long landing may fail before the run gives up. */
  readonly retryBudgetMs: number
  /** How long to wait for another sync's writer lease. */
  readonly leaseWaitMs: number | undefined
  /** A lease without a heartbeat for this long may be taken over (a killed sync's). */
  readonly leaseTtlMs: number | undefined
  /**
   * Every-pipeline mode: do not wait for a lease another sync holds, skip the pipeline (another
   * process is syncing it). The watch, kept between rounds, lets a dead holder's lease be taken
   * over once this process has seen it unchanged for the TTL.
   */
  readonly leaseWatch?: LeaseWatch
  /**
   * A run of a long-running every-pipeline sync (`once` per round): a stop signal ends it as a
   * long-running sync ends, landing for the grace period, as a clean stop rather than a failure.
   */
  readonly stopEndsCleanly?: boolean
}

export type PipelineRunResult =
  | {
      readonly status: 'completed'
      readonly runId: string
      readonly rowsRead: number
      readonly rowsWritten: number
      readonly deadletterRows: number
      readonly discardedRows: number
      readonly namespaces: number
      readonly elapsedMs: number
    }
  | { readonly status: 'skipped'; readonly reason: SkipReason }
  /** A stop signal ended the run (`stopEndsCleanly`): what it committed and did not land stays in the WAL. */
  | { readonly status: 'stopped' }

export async function runPipeline(options: PipelineRunOptions): Promise<PipelineRunResult> {
  const { settings } = options
  const store = await openPipelineStore(settings)
  try {
    const state = store.pipeline(settings.name)
    const skip = await skipReason(state, options)
    if (skip) return skip
    const failed = new AbortController()
    const lease = options.leaseWatch && (await leaseIfFree(state, options, failed))
    if (lease === null) return { status: 'skipped', reason: 'leased' }
    return await runSync(state, options, failed, lease)
  } finally {
    await store.close()
  }
}

async function skipReason(
  state: PipelineState,
  options: PipelineRunOptions,
): Promise<PipelineRunResult | undefined> {
  const { name, syncFrequencySeconds } = options.settings
  let message: string | undefined
  let reason: 'disabled' | 'frequency' = 'disabled'
  if (!(await state.isEnabled())) message = `Pipeline '${name}' disabled, skipping.`
  else if (options.honourFrequency) {
    const lastRun = await state.getLastRun()
    const ago = lastRun && Math.floor((Date.now() - lastRun.getTime()) / 1000)
    if (ago !== undefined && ago < syncFrequencySeconds) {
      message = `Pipeline '${name}' last ran ${ago} seconds ago, skipping.`
      reason = 'frequency'
    }
  }
  if (message === undefined) return undefined
  options.logger.info({ pipeline: name, reason }, message)
  options.listener({ type: 'skipped', pipeline: name, reason, message })
  return { status: 'skipped', reason }
}

/** Takes the writer lease, waiting for it (up to the lease wait) unless `waitMs` says otherwise. */
function takeLease(
  state: PipelineState,
  options: PipelineRunOptions,
  failed: AbortController,
  waitMs = options.leaseWaitMs,
): Promise<Lease> {
  return state.acquireLease({
    owner: localOwnerId(),
    isHolderGone: isLocalOwnerGone,
    ...(waitMs !== undefined && { waitMs }),
    ...(options.leaseTtlMs !== undefined && { ttlMs: options.leaseTtlMs }),
    ...(options.leaseWatch && { watch: options.leaseWatch }),
    onLost: (error) => failed.abort(error),
    onRenewed: (lease) =>
      options.logger.debug(
        { pipeline: options.settings.name, fence: lease.token.toString() },
        'writer lease renewed',
      ),
  })
}

/** Every-pipeline mode: the lease at once, or null (logged) when another live sync holds it. */
async function leaseIfFree(
  state: PipelineState,
  options: PipelineRunOptions,
  failed: AbortController,
): Promise<Lease | null> {
  try {
    return await takeLease(state, options, failed, 0)
  } catch (error) {
    if (!hasCode(error, LEASE_UNAVAILABLE)) throw error
    const { name } = options.settings
    const { holder } = error as LeaseUnavailableError
    const message = `Pipeline '${name}' is being synced by '${holder.owner}', skipping.`
    options.logger.info({ pipeline: name, reason: 'leased', holder: holder.owner }, message)
    options.listener({ type: 'skipped', pipeline: name, reason: 'leased', message })
    return null
  }
}

async function runSync(
  state: PipelineState,
  options: PipelineRunOptions,
  failed: AbortController,
  leased: Lease | undefined,
): Promise<PipelineRunResult> {
  const { settings, listener, chaos } = options
  const pipeline = settings.name
  const runId = randomUUID()
  const logger = options.logger.child({ pipeline, run_id: runId })
  const progress = new RunProgress()
  const cleanups: (() => Promise<unknown>)[] = []
  listener({ type: 'start', pipeline, runId, progress, sink: settings.sinkEntry })
  logger.info({ once: options.once, data_dir: settings.dataDir }, 'sync started')
  try {
    const lease = leased ?? (await takeLease(state, options, failed))
    cleanups.push(() => lease.release())
    progress.lease = { token: lease.token, takeover: lease.takeover }
    logger.info({ fence: lease.token.toString() }, 'writer lease acquired')

    const context: ConnectorContext = {
      configDir: options.configDir,
      dataDir: settings.dataDir,
      pipeline,
      logger: connectorLogger(logger),
    }
    const source = await createSource(options.source, context, pipeline)
    cleanups.push(() => source.close())
    const schemas = new SchemaRegistry(
      state,
      lease.token,
      (schema) => discovered(schema, options, runId, logger),
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

    const walSettings = options.wal
    const wal = await openWal({
      pipeline,
      dataDir: settings.dataDir,
      backend: walBackend(settings, state),
      bytesPerFile: walSettings.bytesPerFile,
      maxDelaySeconds: walSettings.maxDelaySeconds,
      positions: resumePositions(state, lease.token),
      // One batch handed to the lander from memory: the first lands without being read back and
      // checked (about 20 ms of a busy event loop before the destination gets any work). More would
      // hold 10 MB each while they wait behind slower landings.
      keepBatches: 1,
      maxTotalBytes: walSettings.maxTotalBytes,
      // Without a destination nothing lands: at the cap the run stops rather than wait for ever.
      whenFull: options.sink ? 'wait' : 'fail',
      // Room for landing on a full disk: the WAL's own needs, and load files of the batches a
      // destination lands or holds (the DuckDB sink writes them under the data directory, up to three:
      // packages/sink-duckdb/src/sink.ts).
      keepFreeBatches: options.sink ? LANDING_BATCHES : 0,
      logger: connectorLogger(logger),
    })
    cleanups.push(() => wal.close())
    // SHOW STATS's counters, written together every COUNTERS_INTERVAL_MS and at the end of the run.
    const counters = new CountersBuffer(state.counters, {
      intervalMs: COUNTERS_INTERVAL_MS,
      onError: (error) => logger.warn({ err: error }, 'writing the counters failed; trying again'),
    })
    cleanups.push(() => counters.close())

    const { sink, deadletterSink } = options
    const lander =
      sink &&
      new Lander({
        wal,
        pipeline,
        fence: lease.token,
        openSink: async () => sink.definition.create(sink.config, context),
        sinkName: { entry: sink.entry, type: sink.type },
        openDeadletterSink:
          deadletterSink && (async () => deadletterSink.definition.create(deadletterSink.config, context)),
        schemas,
        progress,
        counters,
        landingFailures: state.landingFailures,
        logger,
        chaos,
        retryBudgetMs: options.once ? options.retryBudgetMs : undefined,
        batchBytes: walSettings.bufferThresholdBytes,
      })
    const landing = lander?.run()
    landing?.catch((error: unknown) => failed.abort(error))
    // A stop under --once ends landing at once. A long-running sync commits its buffer on a stop
    // (below) and goes on landing what it committed for STOP_GRACE_MS, so a scheduler's stop does
    // not leave the last rows for the next start; a second signal quits at once (commands/common.ts).
    let grace: NodeJS.Timeout | undefined
    const stopLanding = (): void => {
      if (options.once && !options.stopEndsCleanly) lander?.stop()
      else grace = setTimeout(() => lander?.stop(), STOP_GRACE_MS)
    }
    options.stop.addEventListener('abort', stopLanding, { once: true })
    cleanups.push(async () => {
      options.stop.removeEventListener('abort', stopLanding)
      clearTimeout(grace)
      lander?.stop()
      await landing?.catch(() => {})
    })

    const reading = AbortSignal.any([options.stop, failed.signal])
    const waitForRoom = (): void => {
      progress.backpressureStalls++
      logger.debug('the WAL is at WAL_MAX_TOTAL_BYTES: reading waits for landed batches to free room')
      lander?.sourceWaiting()
    }
    const buffer = new BatchBuffer({
      thresholdBytes: walSettings.bufferThresholdBytes,
      thresholdSeconds: walSettings.bufferThresholdSeconds,
      commit: async (batch) => {
        const id = await wal.commit(batch, { signal: reading, onFull: waitForRoom })
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
        if (!sink) for (const part of batch.parts) progress.written(part.namespace, part.rows)
        chaos.at('after-commit', batchKey(id))
      },
    })

    listener({ type: 'phase', pipeline, runId, phase: 'Ingesting', state: 'start' })
    const diskFull = await readIntoWal({
      source,
      wal,
      buffer,
      schemas,
      progress,
      chaos,
      pipeline,
      follow: !options.once,
      signal: reading,
    })
    if (diskFull) throw await landAfterDiskFull(diskFull, wal, lander, landing, logger)
    throwIfFailed(failed.signal)
    // Stopped before the source was read to its end (a pipeline without data_sink has no lander
    // to tell): whatever the signal, --once did not do its job.
    if (options.once && options.stop.aborted && !options.stopEndsCleanly)
      throw new InterruptedError(pipeline, String(options.stop.reason ?? 'a signal'))
    listener({ type: 'phase', pipeline, runId, phase: 'Ingesting', state: 'done' })

    progress.phase = 'Finalising'
    listener({ type: 'phase', pipeline, runId, phase: 'Finalising', state: 'start' })
    lander?.finish()
    const drained = (await landing) ?? true
    throwIfFailed(failed.signal)
    if (!drained && options.once && !options.stopEndsCleanly)
      throw new InterruptedError(pipeline, String(options.stop.reason ?? 'a signal'))
    if (options.stopEndsCleanly && options.stop.aborted) {
      logger.info({ landed_all: drained }, 'sync stopped')
      return { status: 'stopped' }
    }
    listener({ type: 'phase', pipeline, runId, phase: 'Finalising', state: 'done' })

    const startedAt = new Date(progress.startedAt)
    await state.setLastRun(startedAt, { fence: lease.token })
    const result = {
      status: 'completed' as const,
      runId,
      rowsRead: progress.rowsRead,
      rowsWritten: progress.rowsWritten,
      deadletterRows: progress.deadletterRows,
      discardedRows: progress.discarded,
      namespaces: schemas.current().length,
      elapsedMs: progress.elapsedMs(),
    }
    logger.info(
      {
        rows_read: result.rowsRead,
        rows_written: result.rowsWritten,
        deadletter_rows: result.deadletterRows,
        discarded_rows: result.discardedRows,
        elapsed_ms: result.elapsedMs,
      },
      'sync complete',
    )
    listener({ type: 'complete', pipeline, ...result })
    return result
  } catch (error) {
    logger.error({ err: error }, 'sync failed')
    const message = error instanceof Error ? error.message : String(error)
    listener({ type: 'error', pipeline, runId, error: message, cause: error })
    throw error
  } finally {
    failed.abort(new Error('run ended'))
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((error: unknown) => logger.warn({ err: error }, 'cleanup failed'))
  }
}

interface IngestOptions {
  readonly source: Source
  readonly wal: Wal
  readonly buffer: BatchBuffer
  readonly schemas: SchemaRegistry
  readonly progress: RunProgress
  readonly chaos: Chaos
  readonly pipeline: string
  readonly follow: boolean
  readonly signal: AbortSignal
}

/**
 * Reads the source into the WAL until it ends (following: until the run stops) and commits the rest.
 * A full disk ends reading but not the run: it resolves with that error, so that what was committed
 * still lands. A commit that waited at the cap until the run stopped is no failure of its own (the
 * run reports why it stopped); either way the resume position stays at the last committed batch.
 */
async function readIntoWal(options: IngestOptions): Promise<WalDiskFullError | undefined> {
  const { buffer, signal } = options
  try {
    await ingest(options)
    if (options.follow && !signal.aborted) {
      // A finite source ended while following: commit what it gave, keep landing, idle until stopped.
      await buffer.flush()
      await aborted(signal)
    }
    await buffer.close()
    return undefined
  } catch (error) {
    if (hasCode(error, 'WAL_DISK_FULL')) return error as WalDiskFullError
    if (signal.aborted && error === signal.reason) return undefined
    throw error
  }
}

/**
 * After the disk filled: nothing more is read, but every committed batch still lands (its acks free
 * WAL files), and the run ends with the disk-full error saying what became of them. Landing needs
 * little new space, and the WAL left it free (keepFreeBytes, keepFreeBatches) and gave its reserve back.
 */
async function landAfterDiskFull(
  error: WalDiskFullError,
  wal: Wal,
  lander: Lander | undefined,
  landing: Promise<boolean> | undefined,
  logger: Logger,
): Promise<WalDiskFullError> {
  logger.warn({ err: error }, 'the disk is full: reading stopped; landing the committed batches')
  if (!lander || !landing)
    return error.withOutcome('the committed batches stay in the WAL (the pipeline has no data_sink)')
  lander.finish()
  const landed = (): string => {
    const n = wal.landedBatches
    return `${n} committed batch${n === 1 ? '' : 'es'} landed`
  }
  try {
    if (await landing) {
      const n = wal.landedBatches
      return error.withOutcome(n === 0 ? 'no committed batch was waiting to land' : `the ${landed()}`)
    }
    return error.withOutcome(`${landed()}; the run was stopped before the rest landed`)
  } catch (failure) {
    return error.withOutcome(`${landed()}; ${failure instanceof Error ? failure.message : String(failure)}`)
  }
}

/** The body bytes of a batch about to be committed (its parts' bodies may be lists of chunks). */
function bodyBytes(batch: BatchInput): number {
  return batch.parts.reduce((sum, part) => sum + partBytes(part.body), 0)
}

function partBytes(body: Uint8Array | readonly Uint8Array[]): number {
  return body instanceof Uint8Array ? body.length : body.reduce((sum, chunk) => sum + chunk.length, 0)
}

/**
 * How long counted batches wait for their write to the state store: one write for the batches of
 * the interval instead of two per batch. The counters lag by at most this (never run ahead).
 */
const COUNTERS_INTERVAL_MS = 1_000

/** Batches a destination may hold on the data directory's disk while it lands them. */
const LANDING_BATCHES = 3

/** Reads the source from the WAL's resume offset into the buffer until it ends or `signal` aborts. */
async function ingest(options: IngestOptions): Promise<void> {
  const { source, buffer, schemas, progress, chaos, signal } = options
  const from = await options.wal.resumeOffset()
  const chunks = source.read(from, { signal, follow: options.follow })[Symbol.asyncIterator]()
  try {
    while (!signal.aborted) {
      const next = await chunks.next().catch((error: unknown) => {
        // A source may end its read with an abort error when asked to stop: that is a clean end.
        if (signal.aborted) return { done: true as const, value: undefined }
        throw new SourceFailedError(options.pipeline, error)
      })
      if (next.done) return
      const chunk = next.value
      const schemaVersion = await schemas.observe(chunk)
      progress.read(chunk.namespace, chunk.rows, chunk.body.length)
      const data = { ...chunk, schemaVersion }
      const refused = chunk.refused ?? []
      await buffer.add(
        refused.length === 0
          ? data
          : [data, deadletterChunk(options.pipeline, refused, chunk.offset, new Date())],
      )
      chaos.at('mid-read', `${chunk.namespace} +${chunk.rows} rows`)
    }
  } finally {
    await chunks.return?.()
  }
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

function discovered(
  schema: NamespaceSchema,
  options: PipelineRunOptions,
  runId: string,
  logger: Logger,
): void {
  logger.info({ namespace: schema.namespace, field_count: schema.fields.length }, 'namespace discovered')
  options.listener({
    type: 'namespace_discovered',
    pipeline: options.settings.name,
    runId,
    namespace: schema.namespace,
    fieldCount: schema.fields.length,
  })
}

/** The WAL keeps the resume position here once the batches carrying it are trimmed. */
export function resumePositions(state: PipelineState, fence: bigint): ResumePositions {
  return {
    load: () => state.getResumeOffset(),
    save: (offset) => (offset === undefined ? state.reset() : state.saveResumeOffset(offset, { fence })),
  }
}

/** Resolves when `signal` aborts, keeping the process alive until then (an idle sync has no other handle). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const keepAlive = setInterval(() => {}, 60_000)
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(keepAlive)
        resolve()
      },
      { once: true },
    )
  })
}

function throwIfFailed(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason
}
