/**
 * Between senders and the runner: each push becomes one chunk that the source's `read` yields, and
 * its promise settles with the WAL commit holding it. Chunks are numbered (`seq`, counted on from
 * the resumed offset); the runner's `committed(offset)` resolves every push up to `offset.seq`. The
 * bytes of pushes not committed yet are counted, and beyond `maxPendingBytes` a push is refused,
 * so a slow destination makes senders wait instead of this process' memory grow.
 */
import type { JsonValue, SourceChunk, SourceOffset } from '@skippr/connector-api'
import type { DecodedPayload } from './decode.js'
import { PushAbandonedError, PushQueueFullError } from './errors.js'
import type { PushOffset } from './offset.js'
import { PushSchemas } from './schemas.js'

export interface PushQueueOptions {
  /** Bytes (as pushed) that may wait for their commit; a push beyond it is refused. */
  readonly maxPendingBytes: number
}

/** One payload's rows for one namespace, and the source's state once they are committed. */
export interface Push<State extends JsonValue> {
  readonly namespace: string
  readonly decoded: DecodedPayload
  readonly state: State
}

interface Waiting {
  readonly seq: number
  readonly bytes: number
  resolve(): void
  reject(error: unknown): void
}

export class PushQueue<State extends JsonValue> {
  private readonly schemas = new PushSchemas()
  /** Chunks pushed, not yet taken by `read`. */
  private readonly ready: { chunk: SourceChunk; waiting: Waiting }[] = []
  /** Pushes (taken or not) whose commit has not happened, in seq order. */
  private readonly uncommitted: Waiting[] = []
  private lastSeq: number | undefined
  private pending = 0
  private closed: PushAbandonedError | undefined
  private wakeReader: (() => void) | undefined
  private readonly roomWaiters: (() => void)[] = []

  constructor(private readonly options: PushQueueOptions) {}

  /** Bytes pushed whose commit has not happened yet. */
  get pendingBytes(): number {
    return this.pending
  }

  /** Whether a push of `bytes` is taken now: under the cap, or the first while nothing is pending. */
  hasRoom(bytes: number): boolean {
    return this.pending === 0 || this.pending + bytes <= this.options.maxPendingBytes
  }

  /** Resolves once a push of `bytes` has room (or the queue closed): for senders that wait, not retry. */
  async room(bytes: number): Promise<void> {
    while (!this.hasRoom(bytes) && !this.closed)
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve))
  }

  /**
   * Queues a push; resolves once the WAL commit holding its rows happened. Throws (at once)
   * `PushQueueFullError` without room, `PushAbandonedError` once closed; rejects with
   * `PushAbandonedError` if the run stops or fails before the commit. A push of no rows resolves
   * once the pushes before it are committed. Only between `chunks()` starting and `close`.
   */
  push(push: Push<State>): Promise<void> {
    if (this.closed) throw this.closed
    if (this.lastSeq === undefined) throw new Error('push before the source was read')
    const bytes = push.decoded.bytes
    if (!this.hasRoom(bytes)) throw new PushQueueFullError(this.pending, this.options.maxPendingBytes)
    if (push.decoded.rows === 0) return this.afterPending()
    const seq = ++this.lastSeq
    const { schema, changed } = this.schemas.observe(push.namespace, push.decoded.fields)
    const offset: PushOffset<State> = { seq, state: push.state }
    const chunk: SourceChunk = {
      namespace: push.namespace,
      format: push.decoded.format,
      rows: push.decoded.rows,
      body: push.decoded.body,
      offset: offset as unknown as SourceOffset,
      ...(changed ? { schema } : {}),
    }
    this.pending += bytes
    return new Promise<void>((resolve, reject) => {
      const waiting = { seq, bytes, resolve, reject }
      this.uncommitted.push(waiting)
      this.ready.push({ chunk, waiting })
      this.wakeReader?.()
    })
  }

  /**
   * The chunks for `Source.read`, numbered on from `from`, until `signal` aborts (pushes not taken
   * by then are abandoned as `stopping`; those taken wait for the runner's last commit or `close`).
   */
  async *chunks(from: PushOffset<State> | undefined, signal: AbortSignal): AsyncGenerator<SourceChunk> {
    this.lastSeq ??= from?.seq ?? 0
    const onAbort = () => this.wakeReader?.()
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      while (!signal.aborted && !this.closed) {
        const next = this.ready.shift()
        if (next) {
          yield next.chunk
          continue
        }
        await new Promise<void>((resolve) => {
          this.wakeReader = resolve
        })
        this.wakeReader = undefined
      }
    } finally {
      signal.removeEventListener('abort', onAbort)
      // Nothing reads on: later pushes are refused, and those not taken will never be committed.
      this.closed ??= new PushAbandonedError('stopping')
      for (const { waiting } of this.ready.splice(0)) this.settle(waiting, this.closed)
    }
  }

  /** The runner's commit acknowledgement (`Source.committed`): resolves every push up to `offset.seq`. */
  committed(offset: SourceOffset): void {
    const { seq } = offset as unknown as PushOffset<State>
    while (this.uncommitted.length > 0 && this.uncommitted[0]!.seq <= seq) this.settle(this.uncommitted[0]!)
  }

  /** Abandons every push not committed (`stopping`, or `failed` with the cause) and refuses new ones. */
  close(why: 'stopping' | 'failed', cause?: unknown): void {
    this.closed ??= new PushAbandonedError(why, cause)
    const error = new PushAbandonedError(why, cause)
    for (const waiting of [...this.uncommitted]) this.settle(waiting, error)
    this.ready.length = 0
    this.wakeReader?.()
    for (const wake of this.roomWaiters.splice(0)) wake()
  }

  private afterPending(): Promise<void> {
    const last = this.uncommitted.at(-1)
    if (!last) return Promise.resolve()
    const seq = last.seq
    return new Promise((resolve, reject) =>
      this.uncommitted.splice(this.uncommitted.length, 0, { seq, bytes: 0, resolve, reject }),
    )
  }

  private settle(waiting: Waiting, error?: unknown): void {
    const at = this.uncommitted.indexOf(waiting)
    if (at !== -1) this.uncommitted.splice(at, 1)
    this.pending -= waiting.bytes
    if (error === undefined) waiting.resolve()
    else waiting.reject(error)
    for (const wake of this.roomWaiters.splice(0)) wake()
  }
}
