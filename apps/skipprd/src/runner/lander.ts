/**
 * Lands committed WAL batches in the sink, each with its identity and the writer lease's fence
 * token: one at a time in commit order, or up to the sink's `concurrentWrites` at once. The sink's
 * answer decides what happens: `landed` / `already-landed` → mark landed in the WAL; `retry` (or a
 * throw) → back off and try the same batch again; `refused` → set those rows aside and write the
 * rest; `fatal` (or a throw marked `permanent`, from opening or preparing the sink) → stop, the
 * batch stays in the WAL. With `--once` a run gives up after `retryBudgetMs` without progress,
 * leaving the batches for the next run.
 *
 * A batch's deadletters (connector-api's deadletter.ts) land in the deadletter sink before the batch
 * counts as landed, each stage under its own deadletter identity: the records its source set aside,
 * which the WAL holds in the batch, beside its rows; the rows the sink refused before the rest is
 * written again, so a crash in between meets the same refusal on the next run. Without a
 * deadletter sink they are counted, logged and dropped.
 *
 * Batches are marked landed in commit order whatever order their writes finish in, so the WAL's
 * watermark never passes a batch that has not landed; one that landed ahead of a failed one is
 * written again by the next run and recognised by its identity. Each mark tells `landed` the
 * batch's source offset (a push source's durable ack).
 *
 * The sink is opened as soon as the lander runs, in the background, so it is ready when the first
 * batch is committed; a failed open is tried again with each write, like the write itself, so an
 * unreachable destination does not stop the source from being read into the WAL.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import {
  batchKey,
  type DeadletterStage,
  deadletterNamespace,
  FENCED,
  hasCode,
  type Sink,
  type SinkBatch,
  type SourceOffset,
  type WriteOutcome,
} from '@skippr/connector-api'
import type { CountedPart, CountersBuffer, LandingFailures } from '@skippr/state'
import type { Wal, WalBatch } from '@skippr/wal'
import type { Logger } from 'pino'
import {
  BatchRejectedError,
  DeadlettersRefusedError,
  LandingIncompleteError,
  RefusedAgainError,
} from '../errors.js'
import { releaseDeadBuffers } from '../heap.js'
import type { Chaos } from './chaos.js'
import {
  countedParts,
  type Deadletter,
  deadletterBatch,
  setAsideRefused,
  sourceDeadletters,
} from './deadletters.js'
import type { RunProgress, WriteAnswer } from './events.js'
import type { SchemaRegistry } from './schemas.js'
import { SinkHandle } from './sink-handle.js'

const FIRST_BACKOFF_MS = 250
const MAX_BACKOFF_MS = 5_000
/** Batches the runner's buffer holds besides the ones being written: one filling, one committing. */
const BUFFERED_BATCHES = 2

export interface ForwarderOptions {
  readonly wal: Wal
  readonly pipeline: string
  readonly fence: bigint
  readonly openSink: () => Promise<Sink>
  /** The data sink as skippr.yml names it (`data_sinks.<entry>`, of `type`), for the log. */
  readonly sinkName: { readonly entry: string; readonly type: string }
  /** The pipeline's deadletter sink; without one, deadletters are counted and dropped. */
  readonly openDeadletterSink: (() => Promise<Sink>) | undefined
  readonly schemas: SchemaRegistry
  readonly progress: RunProgress
  /** The pipeline's saved committed/landed counters (`SHOW STATS`). */
  readonly counters: CountersBuffer
  /** Where failed attempts are recorded for `SHOW PIPELINE`. */
  readonly landingFailures: LandingFailures
  readonly logger: Logger
  readonly chaos: Chaos
  /**
   * Give up after failing this long once the source is read (`finish()`) or while it waits at
   * WAL_MAX_TOTAL_BYTES (`sourceWaiting()`); undefined retries until stopped.
   */
  readonly retryBudgetMs: number | undefined
  /** A batch's usual size (the buffer's byte threshold), to tell live batch memory from dead. */
  readonly batchBytes: number
  /** Told each batch's source offset once it is marked landed, in commit order (a push source's durable ack). */
  readonly landed?: (offset: SourceOffset) => void
}

export class Lander {
  private commits = 0
  /** When `finish()` was called: the retry budget counts from here at the earliest. */
  private finishedAt: number | undefined
  /** Since when the source waits at WAL_MAX_TOTAL_BYTES for landings; the next commit clears it. */
  private waitingSince: number | undefined
  private stopped = false
  private readonly stopping = new AbortController()
  private wake: (() => void) | undefined
  private readonly sink: SinkHandle
  private readonly deadletterSink: SinkHandle | undefined
  private readonly deadletterNamespace: string
  /**
   * Marking the batches written so far landed (WAL watermark, counters), each after the one before:
   * false once one of them did not land (stopped), so none after it is marked.
   */
  private marking: Promise<boolean> = Promise.resolve(true)
  /** Writes in progress, settled or not; at most the sink's `concurrentWrites`. */
  private readonly writing = new Set<Promise<void>>()
  /** Failed attempts may be on record (an earlier run's, or this one's): landed batches are forgotten there. */
  private failuresOnRecord = true
  /** The first write that failed for good: the run ends with it once the others settle. */
  private failure: { readonly error: unknown } | undefined

  constructor(private readonly options: ForwarderOptions) {
    const { logger, openDeadletterSink, pipeline, schemas } = options
    this.sink = new SinkHandle(options.openSink, () => schemas.current(), logger)
    this.deadletterNamespace = deadletterNamespace(pipeline)
    this.deadletterSink = openDeadletterSink && new SinkHandle(openDeadletterSink, () => [], logger)
  }

  /** A batch was committed. */
  committed(): void {
    this.commits++
    this.waitingSince = undefined
    this.signal()
  }

  /** The source waits at WAL_MAX_TOTAL_BYTES until a landing frees room: the retry budget runs meanwhile. */
  sourceWaiting(): void {
    this.waitingSince ??= Date.now()
  }

  /** Nothing more will be committed: end once every batch has landed. */
  finish(): void {
    this.finishedAt = Date.now()
    this.signal()
  }

  /** End after the write in progress, leaving the rest in the WAL. */
  stop(): void {
    this.stopped = true
    this.stopping.abort()
    this.signal()
  }

  /**
   * Lands batches until finished and drained (resolves true) or stopped (false). Throws on a
   * rejected batch or an exhausted retry budget.
   */
  async run(): Promise<boolean> {
    // A failure here is met again, and reported, by the first write.
    this.sink.open().catch(() => {})
    try {
      // The last batch started: the next pass goes on after it, while earlier writes still run.
      let after: bigint | undefined
      let startedAll = false
      while (!this.stopped) {
        const seen = this.commits
        // Room first, then the next batch: a batch is read (from the log) only when it can be written.
        const batches = this.options.wal.pending(after)
        try {
          for (;;) {
            await this.admit()
            if (this.stopped) break
            const next = await batches.next()
            if (next.done) break
            this.options.progress.batchMet(next.value.id.seq, batchBytes(next.value))
            this.start(next.value)
            after = next.value.id.seq
          }
        } finally {
          await batches.return(undefined)
        }
        if (this.stopped) break
        startedAll = this.finishedAt !== undefined && this.commits === seen
        if (startedAll) break
        if (this.commits === seen) await new Promise<void>((resolve) => (this.wake = resolve))
      }
      const landedAll = await this.settle()
      return startedAll && landedAll
    } finally {
      await Promise.all(this.writing)
      await this.marking.catch(() => undefined)
      await Promise.all([this.sink.close(), this.deadletterSink?.close()])
    }
  }

  /** Waits for room for one more write (one until the sink is open and says otherwise). */
  private async admit(): Promise<void> {
    while (this.writing.size >= this.maxWrites) await Promise.race(this.writing)
  }

  /** Writes the sink takes at once: one until it is open and says otherwise. */
  private get maxWrites(): number {
    return Math.max(1, this.sink.current?.concurrentWrites ?? 1)
  }

  /** Starts writing `batch`; its mark follows the marks of the batches before it. */
  private start(batch: WalBatch): void {
    const landing = this.land(batch)
    const writing = landing.then(() => {}, this.fail)
    this.writing.add(writing)
    void writing.finally(() => this.writing.delete(writing))
    const before = this.marking
    this.marking = (async () => {
      if (!(await before)) return false
      const counted = await landing
      return counted !== undefined && (await this.markLanded(batch, counted))
    })()
    this.marking.catch(this.fail)
  }

  /** Keeps the first failure, of a write or a mark, and stops starting writes. */
  private readonly fail = (error: unknown): void => {
    this.failure ??= { error }
    this.stop()
  }

  /** Waits for every write and mark so far: true when each started batch landed. Throws the first failure. */
  private async settle(): Promise<boolean> {
    await Promise.all(this.writing)
    if (this.failure === undefined) return this.marking
    const { error } = this.failure
    if (!(error instanceof RetryBudgetSpent)) throw error
    // Counted once the batches that did land are marked, so the count is what stays in the WAL.
    await this.marking.catch(() => undefined)
    throw new LandingIncompleteError(
      this.options.pipeline,
      await this.countPending(),
      (this.options.retryBudgetMs ?? 0) / 1000,
      error.cause,
    )
  }

  private signal(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  /**
   * Lands `batch` and its deadletters; resolves with what landed, for the counters, or undefined
   * when the run stops first.
   */
  private async land(batch: WalBatch): Promise<CountedPart[] | undefined> {
    const { fence, progress, logger, chaos, pipeline, sinkName } = this.options
    const key = batchKey(batch.id)
    const started = Date.now()
    let parts = await Promise.all(
      batch.parts
        .filter((part) => part.namespace !== this.deadletterNamespace)
        .map(async (part) => ({
          ...part,
          schema: await this.options.schemas.get(part.namespace, part.schemaVersion),
        })),
    )
    // What the source set aside comes from the WAL with the rows, so it lands beside them.
    const fromSource = sourceDeadletters(batch)
    const sourceSetAside = this.setAside(batch, 'source', fromSource, key)
    // Its failure is met below, where it is awaited; until then it must not count as unhandled.
    sourceSetAside.catch(() => undefined)
    let refusedRows: Deadletter[] = []
    try {
      for (;;) {
        // A batch of set-aside records alone has no rows to land.
        const outcome: WriteOutcome | undefined =
          parts.length === 0
            ? { status: 'already-landed' }
            : await this.writeUntilAnswered(
                this.sink,
                { id: batch.id, fence, committedAt: batch.committedAt, parts },
                key,
              )
        if (outcome === undefined) return undefined
        if (outcome.status === 'refused') {
          if (refusedRows.length > 0) throw new RefusedAgainError(pipeline, key, outcome.rows)
          const rest = setAsideRefused(batch.id, parts, outcome.rows)
          logger.warn(
            { batch: key, rows: rest.deadletters.length },
            'the destination refused rows; setting them aside',
          )
          // Set aside before the rest is written: a retry after a crash meets the same refusal.
          if (!(await this.setAside(batch, 'refused', rest.deadletters, key))) return undefined
          parts = rest.parts
          refusedRows = rest.deadletters
          continue
        }
        if (!(await sourceSetAside)) return undefined
        if (outcome.status === 'landed') for (const part of parts) progress.written(part.namespace, part.rows)
        logger.debug(
          {
            batch: key,
            rows: parts.reduce((sum, part) => sum + part.rows, 0),
            duration_ms: Date.now() - started,
            sink: sinkName.entry,
            sink_type: sinkName.type,
            outcome: outcome.status,
          },
          'batch landed',
        )
        chaos.at('after-land', key)
        return countedParts(parts, [...fromSource, ...refusedRows])
      }
    } finally {
      // Settled before the batch's outcome is: the lander closes the deadletter sink after it.
      await sourceSetAside.catch(() => undefined)
    }
  }

  /**
   * Lands one stage of a batch's deadletters in the deadletter sink, or counts and drops them
   * without one. False when the run stops first.
   */
  private async setAside(
    batch: WalBatch,
    stage: DeadletterStage,
    deadletters: readonly Deadletter[],
    key: string,
  ): Promise<boolean> {
    if (deadletters.length === 0) return true
    const { progress, logger, fence } = this.options
    const count = () => {
      for (const d of deadletters) progress.deadlettered(d.namespace, 1)
    }
    if (!this.deadletterSink) {
      count()
      progress.discarded += deadletters.length
      logger.warn(
        { batch: key, rows: deadletters.length },
        `Discarded ${deadletters.length} deadletter records because no deadletter sink is configured`,
      )
      return true
    }
    const dlBatch = deadletterBatch({ id: batch.id, fence }, stage, deadletters, new Date())
    const outcome = await this.writeUntilAnswered(this.deadletterSink, dlBatch, batchKey(dlBatch.id))
    if (outcome === undefined) return false
    if (outcome.status === 'refused')
      throw new DeadlettersRefusedError(this.options.pipeline, key, outcome.rows)
    count()
    logger.info({ batch: key, stage, rows: deadletters.length }, 'deadletters landed')
    return true
  }

  /**
   * Writes `batch` to `handle` until it answers other than `retry`: resolves with that answer, or
   * undefined when the run stops first. Throws on `fatal` and when the retry budget is spent.
   */
  private async writeUntilAnswered(
    handle: SinkHandle,
    batch: SinkBatch,
    key: string,
  ): Promise<WriteOutcome | undefined> {
    const { logger, chaos, progress } = this.options
    let failingSince: number | undefined
    for (let attempt = 1; ; attempt++) {
      progress.uploadsInFlight++
      const started = performance.now()
      const outcome = await handle
        .write(batch, (write) => chaos.during('mid-write', key, write))
        .finally(() => progress.uploadsInFlight--)
      progress.writes.record(answerOf(outcome), (performance.now() - started) / 1000)
      if (outcome.status === 'fatal' && hasCode(outcome.error, FENCED)) progress.fenceRefusals++
      if (outcome.status !== 'retry' && outcome.status !== 'fatal') return outcome
      await this.recordFailure(batch, outcome.error)
      // Before the `none` tier's drop: a batch that cannot land (e.g. a closed stdout) must stay in the
      // WAL, never count as landed.
      if (outcome.status === 'fatal') throw new BatchRejectedError(this.options.pipeline, key, outcome.error)
      if (handle.current?.guarantee === 'none') {
        logger.warn({ batch: key, err: outcome.error }, 'the sink does not retry: batch dropped')
        return { status: 'already-landed' }
      }
      failingSince ??= Date.now()
      // Stopping: the batch stays in the WAL for the next run.
      if (this.stopped) return undefined
      if (this.budgetSpent(failingSince)) throw new RetryBudgetSpent(outcome.error)
      const delay = backoff(attempt)
      logger.warn(
        { batch: key, attempt, delay_ms: delay, reason: outcome.error.message, err: outcome.error },
        'batch did not land; retrying',
      )
      await sleep(delay, undefined, { signal: this.stopping.signal }).catch(() => {})
    }
  }

  private async markLanded(batch: WalBatch, counted: readonly CountedPart[]): Promise<true> {
    await this.options.wal.markLanded(batch.id)
    if (batch.offset !== undefined) this.options.landed?.(batch.offset)
    this.options.progress.batchLanded(batch.id.seq)
    await this.options.counters.recordLanded(batch.id, counted)
    if (this.failuresOnRecord) {
      this.failuresOnRecord = false
      await this.options.landingFailures.forgetThrough(batch.id)
    }
    releaseDeadBuffers((BUFFERED_BATCHES + this.maxWrites) * this.options.batchBytes)
    return true
  }

  /** For `SHOW PIPELINE`: a report, so failing to record it never stops the landing. */
  private async recordFailure(batch: SinkBatch, error: Error): Promise<void> {
    this.failuresOnRecord = true
    // A deadletter batch's failure is its data batch's.
    const id = { epoch: batch.id.epoch, seq: batch.id.seq }
    await this.options.landingFailures
      .record(id, error.message)
      .catch((err: unknown) => this.options.logger.warn({ err }, 'recording a failed landing attempt failed'))
  }

  /**
   * With a budget (`--once`), failing has gone on too long once the source is read completely:
   * while it is still being read the rows keep going into the WAL, however long the sink is down.
   */
  private budgetSpent(failingSince: number): boolean {
    const budget = this.options.retryBudgetMs
    // Waiting at the cap, the source gives nothing more until a batch lands: as if it were read.
    const since = this.finishedAt ?? this.waitingSince
    if (budget === undefined || since === undefined) return false
    return Date.now() - Math.max(failingSince, since) >= budget
  }

  private async countPending(): Promise<number> {
    let count = 0
    for await (const _ of this.options.wal.pending()) count++
    return count
  }
}

/** A write kept failing past the retry budget; `cause` is its last failure. */
class RetryBudgetSpent extends Error {
  constructor(override readonly cause: Error) {
    super('retry budget spent', { cause })
  }
}

/** Exponential backoff with jitter: 250 ms doubling to 5 s. */
function backoff(attempt: number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1))
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
}

/** The metrics' name for a sink's answer. */
function answerOf(outcome: WriteOutcome): WriteAnswer {
  return outcome.status === 'already-landed' ? 'already_landed' : outcome.status
}

/** The body bytes of a batch read back from the WAL. */
function batchBytes(batch: WalBatch): number {
  return batch.parts.reduce((sum, part) => sum + part.body.length, 0)
}
