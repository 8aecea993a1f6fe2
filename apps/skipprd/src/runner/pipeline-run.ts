/**
 * One sync of one pipeline (the README's "Commands" and "The guarantee"), in this sequence (the
 * parts it runs are built in run-parts.ts, reading is ingest.ts):
 *
 * 1. skip it if disabled (before touching the source), or — when every pipeline is synced — if it
 *    ran within its sync_frequency_seconds;
 * 2. take the writer lease (its token fences every write), a push source standing by meanwhile;
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
import { hasCode, type Meter, type SinkDefinition, type SourceDefinition } from '@skippr/connector-api'
import {
  isLocalOwnerGone,
  LEASE_UNAVAILABLE,
  type Lease,
  type LeaseUnavailableError,
  type LeaseWatch,
  localOwnerId,
  type PipelineState,
} from '@skippr/state'
import type { Wal, WalDiskFullError, WalSettings } from '@skippr/wal'
import type { Logger } from 'pino'
import type { Env } from '../config/interpolate.js'
import type { PipelineSettings } from '../config/settings.js'
import type { ResolvedConnector } from '../connectors.js'
import { InterruptedError } from '../errors.js'
import type { Chaos } from './chaos.js'
import { type ClusterNode, startClusterNode } from './cluster-node.js'
import { RunProgress, type SkipReason, type SyncListener } from './events.js'
import { readIntoWal } from './ingest.js'
import type { Lander } from './lander.js'
import { buildRun, connectorContext, type RunContext } from './run-parts.js'
import { openPipelineStore } from './state-store.js'

/** How long a stopped long-running sync goes on landing the batches it committed. */
const STOP_GRACE_MS = 10_000
export interface PipelineRunOptions {
  readonly settings: PipelineSettings
  /** Buffer thresholds and WAL file settings, resolved from skippr.yml and the environment. */
  readonly wal: WalSettings
  readonly source: ResolvedConnector<SourceDefinition>
  readonly sink: ResolvedConnector<SinkDefinition> | undefined
  readonly deadletterSink: ResolvedConnector<SinkDefinition> | undefined
  /** The data sink's `schema_sink:`: its tables are created and evolved ahead of the data sink's. */
  readonly schemaSink?: ResolvedConnector<SinkDefinition> | undefined
  readonly configDir: string
  readonly env: Env
  readonly once: boolean
  /** Every-pipeline mode: skip a pipeline that ran within its sync_frequency_seconds. */
  readonly honourFrequency: boolean
  readonly logger: Logger
  readonly listener: SyncListener
  /** Where the connectors publish their metrics (`ConnectorContext.meter`), when the sync serves them. */
  readonly meter?: ((pipeline: string) => Meter) | undefined
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
  let cluster: ClusterNode | undefined
  try {
    const state = store.pipeline(settings.name)
    const skip = await skipReason(state, options)
    if (skip) return skip
    const failed = new AbortController()
    const lease = options.leaseWatch && (await leaseIfFree(state, options, failed))
    if (lease === null) return { status: 'skipped', reason: 'leased' }
    // Serving as a peer from before the lease wait: the leader's commits wait for this node's copy.
    cluster = settings.cluster && (await startClusterNode(settings, settings.cluster, store, options.logger))
    return await runSync(state, options, failed, lease, cluster)
  } finally {
    await cluster?.close()
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
    // A stop ends the wait for another sync's lease: nothing has started yet.
    signal: options.stop,
    onLost: (error) => failed.abort(error),
    onRenewed: (lease) =>
      options.logger.debug(
        { pipeline: options.settings.name, fence: lease.token.toString() },
        'writer lease renewed',
      ),
  })
}

/**
 * Takes the lease as takeLease does. While another sync holds it, a push source with a standby
 * (SourceDefinition.standby) answers its clients that this process is not the writer, until the
 * lease is taken or the wait ends; its address is free again before the source is created.
 */
async function takeLeaseStandingBy(
  state: PipelineState,
  options: PipelineRunOptions,
  failed: AbortController,
  logger: Logger,
): Promise<Lease> {
  const { definition, config } = options.source
  if (definition.standby === undefined) return takeLease(state, options, failed)
  try {
    return await takeLease(state, options, failed, 0)
  } catch (error) {
    if (!hasCode(error, LEASE_UNAVAILABLE)) throw error
  }
  // The holder may listen on the same address of this host: then there is nothing to stand by on.
  const standby = await Promise.resolve(definition.standby(config, connectorContext(options, logger))).catch(
    (error: unknown) => {
      logger.warn(
        { err: error },
        'cannot stand by for clients; waiting for the writer lease without answering them',
      )
      return undefined
    },
  )
  try {
    return await takeLease(state, options, failed)
  } finally {
    await standby?.close()
  }
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
  cluster: ClusterNode | undefined,
): Promise<PipelineRunResult> {
  const { settings, listener } = options
  const pipeline = settings.name
  const runId = randomUUID()
  const logger = options.logger.child({ pipeline, run_id: runId })
  const progress = new RunProgress()
  const cleanups: (() => Promise<unknown>)[] = []
  const phase = (name: 'Ingesting' | 'Finalising', step: 'start' | 'done') =>
    listener({ type: 'phase', pipeline, runId, phase: name, state: step })
  listener({ type: 'start', pipeline, runId, progress, sink: settings.sinkEntry })
  logger.info({ once: options.once, data_dir: settings.dataDir }, 'sync started')
  // Stopped while another sync held the lease: nothing started; a long-running sync just ends, --once fails.
  const stoppedWaiting = (error: unknown): undefined => {
    if (!options.stop.aborted || error !== options.stop.reason) throw error
    if (options.once && !options.stopEndsCleanly)
      throw new InterruptedError(pipeline, String(options.stop.reason ?? 'a signal'))
    return undefined
  }
  try {
    const lease = leased ?? (await takeLeaseStandingBy(state, options, failed, logger).catch(stoppedWaiting))
    if (lease === undefined) {
      logger.info('sync stopped while waiting for the writer lease')
      return { status: 'stopped' }
    }
    cleanups.push(() => lease.release())
    progress.lease = { token: lease.token, takeover: lease.takeover }
    logger.info({ fence: lease.token.toString() }, 'writer lease acquired')

    const reading = AbortSignal.any([options.stop, failed.signal])
    const fail = (error: unknown): void => failed.abort(error)
    const run = { state, options, lease, runId, logger, progress, reading, fail, cleanups, cluster }
    const { source, schemas, wal, lander, buffer } = await buildRun(run)
    const landing = startLanding(lander, options, failed, cleanups)

    phase('Ingesting', 'start')
    const diskFull = await readIntoWal({
      source,
      wal,
      buffer,
      schemas,
      progress,
      pipeline,
      chaos: options.chaos,
      follow: !options.once,
      signal: reading,
    })
    if (diskFull) throw await landAfterDiskFull(diskFull, wal, lander, landing, logger)
    throwIfFailed(failed.signal)
    // Stopped before the source was read to its end (a pipeline without data_sink has no lander
    // to tell): whatever the signal, --once did not do its job.
    if (options.once && options.stop.aborted && !options.stopEndsCleanly)
      throw new InterruptedError(pipeline, String(options.stop.reason ?? 'a signal'))
    phase('Ingesting', 'done')

    progress.phase = 'Finalising'
    phase('Finalising', 'start')
    lander?.finish()
    const drained = (await landing) ?? true
    throwIfFailed(failed.signal)
    if (!drained && options.once && !options.stopEndsCleanly)
      throw new InterruptedError(pipeline, String(options.stop.reason ?? 'a signal'))
    if (options.stopEndsCleanly && options.stop.aborted) {
      logger.info({ landed_all: drained }, 'sync stopped')
      return { status: 'stopped' }
    }
    phase('Finalising', 'done')
    await state.setLastRun(new Date(progress.startedAt), { fence: lease.token })
    return completed(run, schemas.current().length)
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

/**
 * Lands committed batches while the source is read. A stop under --once ends landing at once. A
 * long-running sync commits its buffer on a stop and goes on landing what it committed for
 * STOP_GRACE_MS, so a scheduler's stop does not leave the last rows for the next start; a second
 * signal quits at once (commands/common.ts).
 */
function startLanding(
  lander: Lander | undefined,
  options: PipelineRunOptions,
  failed: AbortController,
  cleanups: (() => Promise<unknown>)[],
): Promise<boolean> | undefined {
  const landing = lander?.run()
  landing?.catch((error: unknown) => failed.abort(error))
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
  return landing
}

/** The run's totals: logged, told to the listener, returned. */
function completed(run: RunContext, namespaces: number): PipelineRunResult {
  const { progress, options } = run
  const result = {
    status: 'completed' as const,
    runId: run.runId,
    rowsRead: progress.rowsRead,
    rowsWritten: progress.rowsWritten,
    deadletterRows: progress.deadletterRows,
    discardedRows: progress.discarded,
    namespaces,
    elapsedMs: progress.elapsedMs(),
  }
  run.logger.info(
    {
      rows_read: result.rowsRead,
      rows_written: result.rowsWritten,
      deadletter_rows: result.deadletterRows,
      discarded_rows: result.discardedRows,
      elapsed_ms: result.elapsedMs,
    },
    'sync complete',
  )
  options.listener({ type: 'complete', pipeline: options.settings.name, ...result })
  return result
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

function throwIfFailed(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason
}
