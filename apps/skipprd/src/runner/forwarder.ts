/**
 * Lands committed WAL batches in the sink, each with its identity and the writer lease's fence
 * token: one at a time in commit order, or up to the sink's `concurrentWrites` at once. The sink's
 * answer decides what happens: `landed` / `already-landed` → mark landed in the WAL; `retry` (or a
 * throw) → back off and try the same batch again; `fatal` → stop, the batch stays in the WAL. With
 * `--once` a run gives up after `retryBudgetMs` without progress, leaving the batches for the next
 * run.
 *
 * Batches are marked landed in commit order whatever order their writes finish in, so the WAL's
 * watermark never passes a batch that has not landed; one that landed ahead of a failed one is
 * written again by the next run and recognised by its identity.
 *
 * The sink is opened as soon as the forwarder runs, in the background, so it is ready when the first
 * batch is committed; a failed open is tried again with each write, like the write itself, so an
 * unreachable destination does not stop the source from being read into the WAL.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import {
  batchKey,
  type NamespaceSchema,
  type Sink,
  type SinkBatch,
  type WriteOutcome,
} from '@skippr/connector-api'
import type { PipelineCounters } from '@skippr/state'
import type { Wal, WalBatch } from '@skippr/wal'
import type { Logger } from 'pino'
import { BatchRejectedError, LandingIncompleteError } from '../errors.js'
import { releaseDeadBuffers } from '../heap.js'
import type { Chaos } from './chaos.js'
import type { RunProgress } from './events.js'
import type { SchemaRegistry } from './schemas.js'

const FIRST_BACKOFF_MS = 250
const MAX_BACKOFF_MS = 5_000
/** Batches the runner's buffer holds besides the ones being written: one filling, one committing. */
const BUFFERED_BATCHES = 2

export interface ForwarderOptions {
  readonly wal: Wal
  readonly pipeline: string
  readonly fence: bigint
  readonly openSink: () => Promise<Sink>
  readonly schemas: SchemaRegistry
  readonly progress: RunProgress
  /** The pipeline's saved committed/landed counters (`SHOW STATS`). */
  readonly counters: PipelineCounters
  readonly logger: Logger
  readonly chaos: Chaos
  /**
   * Give up after failing this long once the source is read (`finish()`); undefined retries until
   * stopped.
   */
  readonly retryBudgetMs: number | undefined
  /** A batch's usual size (the buffer's byte threshold), to tell live batch memory from dead. */
  readonly batchBytes: number
}

export class Forwarder {
  private commits = 0
  /** When `finish()` was called: the retry budget counts from here at the earliest. */
  private finishedAt: number | undefined
  private stopped = false
  private readonly stopping = new AbortController()
  private wake: (() => void) | undefined
  /** The sink's opening, undefined again after a failed one; `sink` once it is open. */
  private opening: Promise<Sink> | undefined
  private sink: Sink | undefined
  /** Schema objects the sink is (being) prepared with (the registry hands out one object per version). */
  private readonly prepared = new WeakMap<NamespaceSchema, Promise<void>>()
  /**
   * Marking the batches written so far landed (WAL watermark, counters), each after the one before:
   * false once one of them did not land (stopped), so none after it is marked.
   */
  private marking: Promise<boolean> = Promise.resolve(true)
  /** Writes in progress, settled or not; at most the sink's `concurrentWrites`. */
  private readonly writing = new Set<Promise<void>>()
  /** The first write that failed for good: the run ends with it once the others settle. */
  private failure: { readonly error: unknown } | undefined

  constructor(private readonly options: ForwarderOptions) {}

  /** A batch was committed. */
  committed(): void {
    this.commits++
    this.signal()
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
    this.openSink().catch(() => {})
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
      await this.closeSink()
    }
  }

  /** Waits for room for one more write (one until the sink is open and says otherwise). */
  private async admit(): Promise<void> {
    while (this.writing.size >= this.maxWrites) await Promise.race(this.writing)
  }

  /** Writes the sink takes at once: one until it is open and says otherwise. */
  private get maxWrites(): number {
    return Math.max(1, this.sink?.concurrentWrites ?? 1)
  }

  /** Starts writing `batch`; its mark follows the marks of the batches before it. */
  private start(batch: WalBatch): void {
    const landing = this.land(batch)
    const writing = landing.then(() => {}, this.fail)
    this.writing.add(writing)
    void writing.finally(() => this.writing.delete(writing))
    const before = this.marking
    this.marking = (async () => (await before) && (await landing) && (await this.markLanded(batch)))()
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

  /**
   * A sink still being opened (nothing was written yet) is closed once it is open: the run does not
   * wait for a destination that does not answer.
   */
  private async closeSink(): Promise<void> {
    const close = (sink: Sink) =>
      sink
        .close()
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'closing the sink failed'))
    if (this.sink) await close(this.sink)
    else void this.opening?.then(close, () => {})
  }

  private signal(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  /** Writes `batch` until it lands (true) or the run stops first (false). */
  private async land(batch: WalBatch): Promise<boolean> {
    const { fence, progress, logger, chaos } = this.options
    const key = batchKey(batch.id)
    const parts = await Promise.all(
      batch.parts.map(async (part) => ({
        ...part,
        schema: await this.options.schemas.get(part.namespace, part.schemaVersion),
      })),
    )
    const sinkBatch: SinkBatch = { id: batch.id, fence, parts }
    let failingSince: number | undefined
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.write(sinkBatch, key)
      if (
        outcome.status === 'landed' ||
        outcome.status === 'already-landed' ||
        this.sink?.guarantee === 'none'
      ) {
        if (outcome.status === 'landed') for (const part of parts) progress.written(part.namespace, part.rows)
        if (outcome.status === 'retry' || outcome.status === 'fatal')
          logger.warn({ batch: key, err: outcome.error }, 'the sink does not retry: batch dropped')
        logger.debug({ batch: key, outcome: outcome.status, attempt }, 'batch landed')
        chaos.at('after-land', key)
        return true
      }
      if (outcome.status === 'fatal') throw new BatchRejectedError(this.options.pipeline, key, outcome.error)
      failingSince ??= Date.now()
      // Stopping: the batch stays in the WAL for the next run.
      if (this.stopped) return false
      if (this.budgetSpent(failingSince)) throw new RetryBudgetSpent(outcome.error)
      const delay = backoff(attempt)
      logger.warn(
        { batch: key, attempt, retryInMs: delay, err: outcome.error },
        'batch did not land; retrying',
      )
      await sleep(delay, undefined, { signal: this.stopping.signal }).catch(() => {})
    }
  }

  private async markLanded(batch: WalBatch): Promise<true> {
    await this.options.wal.markLanded(batch.id)
    await this.options.counters.recordLanded(batch.id, batch.parts)
    releaseDeadBuffers((BUFFERED_BATCHES + this.maxWrites) * this.options.batchBytes)
    return true
  }

  /**
   * With a budget (`--once`), failing has gone on too long once the source is read completely:
   * while it is still being read the rows keep going into the WAL, however long the sink is down.
   */
  private budgetSpent(failingSince: number): boolean {
    const budget = this.options.retryBudgetMs
    if (budget === undefined || this.finishedAt === undefined) return false
    return Date.now() - Math.max(failingSince, this.finishedAt) >= budget
  }

  /** One attempt: open and prepare the sink if needed, then write. Every failure is a `retry`. */
  private async write(batch: SinkBatch, key: string): Promise<WriteOutcome> {
    const { progress, chaos } = this.options
    progress.uploadsInFlight++
    try {
      const sink = await this.openSink()
      for (const part of batch.parts) await this.prepare(sink, part.schema)
      return await chaos.during('mid-write', key, sink.write(batch))
    } catch (error) {
      return { status: 'retry', error: error instanceof Error ? error : new Error(String(error)) }
    } finally {
      progress.uploadsInFlight--
    }
  }

  /** Opens the sink once and prepares every current namespace, so tables exist even before rows arrive. */
  private async openSink(): Promise<Sink> {
    this.opening ??= this.options.openSink().then(
      (sink) => (this.sink = sink),
      (error: unknown) => {
        this.opening = undefined
        throw error
      },
    )
    const sink = await this.opening
    for (const schema of this.options.schemas.current()) await this.prepare(sink, schema)
    return sink
  }

  private prepare(sink: Sink, schema: NamespaceSchema): Promise<void> {
    let preparing = this.prepared.get(schema)
    if (preparing === undefined) {
      preparing = sink.prepare(schema).catch((error: unknown) => {
        this.prepared.delete(schema)
        throw error
      })
      this.prepared.set(schema, preparing)
    }
    return preparing
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
