/**
 * The slot contract shared by the disk slot and the memory slot, and the parts both implement the same
 * way: progress notifications and appendBlocking's wait for space.
 */
import { AppendDeadlineError, SlotFullError } from './errors.js'
import type { SlotLogger } from './logger.js'
import type { DataLossRange } from './recovery.js'

export type Durability = 'append' | 'periodic' | 'memory'
/** How a new segment file gets its size: writing zeros (blocks reserved) or as a sparse file. */
export type Preallocate = 'zeros' | 'sparse'

/**
 * A frame's payload: one buffer, or pieces that are its bytes back to back. Pieces let a caller that
 * assembles a frame from parts (the WAL: a header and the batch's bodies) append it without joining them.
 */
export type Payload = Uint8Array | readonly Uint8Array[]

export function payloadPieces(payload: Payload): readonly Uint8Array[] {
  return payload instanceof Uint8Array ? [payload] : payload
}

export function payloadLength(payload: Payload): number {
  if (payload instanceof Uint8Array) return payload.length
  let length = 0
  for (const piece of payload) length += piece.length
  return length
}

export interface SlotFrame {
  fsn: bigint
  payload: Uint8Array
}

export interface SlotStats {
  durability: Durability | 'none'
  /** Segment files (0 for the memory slot). */
  segments: number
  /** Bytes held: segment files incl. preallocated space and the spare (disk), frame bytes (memory). */
  totalBytes: number
  maxTotalBytes: number
  publishedFsn: bigint
  ackedFsn: bigint
  /** Frames appended and published by this instance. */
  appends: number
  /** fdatasync calls on segment files by this instance. */
  syncs: number
  /** append/appendBlocking calls that found the slot full. */
  backpressureStalls: number
  /** Bytes of interrupted appends discarded by recovery. */
  tornTailBytes: number
  /** FSN ranges recovery found unreadable (damage, not torn tails). */
  dataLoss: DataLossRange[]
}

export interface Slot {
  /**
   * The slot's identity (a UUID): made with the slot, kept across reopening and recovery, new for a slot
   * that is deleted and made again. FSNs count within one slot; the sender announces this id with its
   * sender id so a receiver never takes one slot's frames for another's.
   */
  readonly slotId: string
  /** Highest FSN readers may see: durable in 'append' mode, written to the OS in the others. */
  readonly publishedFsn: bigint
  /** Cumulative ack: every FSN up to it is delivered and may be trimmed. */
  readonly ackedFsn: bigint
  /**
   * Appends one frame; resolves with its FSN once published. Fails at once when the slot is full. The
   * slot reads `payload` until the returned promise settles: do not change it before.
   */
  append(payload: Payload): Promise<bigint>
  /** Like append, but waits up to appendDeadlineMs for acks to free space. */
  appendBlocking(payload: Payload): Promise<bigint>
  /** Published frames with fsn >= max(fromFsn, ackedFsn + 1), in FSN order, up to publishedFsn. */
  replay(fromFsn?: bigint): AsyncIterable<SlotFrame>
  /** Acks every frame up to `fsn`; resolves once that is durable and fully acked segments are gone. */
  ack(fsn: bigint): Promise<void>
  /**
   * Closes the segment being written even if it is not full: appends made before the call stay in it,
   * later ones start the next segment. A sealed segment can be trimmed once its frames are acked, so a
   * slow trickle of appends does not keep acked data on disk. A no-op when the segment holds no frames.
   */
  seal(): Promise<void>
  stats(): SlotStats
  /** Calls `listener` with the new publishedFsn after each advance. Returns an unsubscribe function. */
  onPublished(listener: (publishedFsn: bigint) => void): () => void
  /** Calls `listener` with the new ackedFsn after each advance. Returns an unsubscribe function. */
  onAcked(listener: (ackedFsn: bigint) => void): () => void
  /** Writes `.failed` with the reason: orphan scans skip this slot until an operator removes it. */
  markFailed(reason: string): Promise<void>
  close(): Promise<void>
}

/** tryAppend's answer when the frame does not fit until acks free space. */
export const FULL = Symbol('full')

export interface BaseSlotOptions {
  appendDeadlineMs: number
  /** Extra words for the appendBlocking timeout message (the sender adds its connection state). */
  describeStall?: (() => string) | undefined
  logger: SlotLogger
}

export abstract class BaseSlot implements Slot {
  private readonly publishedListeners = new Set<(fsn: bigint) => void>()
  private readonly ackedListeners = new Set<(fsn: bigint) => void>()
  private readonly spaceWaiters = new Set<() => void>()
  protected backpressureStalls = 0

  constructor(protected readonly base: BaseSlotOptions) {}

  abstract get slotId(): string
  abstract get publishedFsn(): bigint
  abstract get ackedFsn(): bigint
  abstract replay(fromFsn?: bigint): AsyncIterable<SlotFrame>
  abstract seal(): Promise<void>
  abstract ack(fsn: bigint): Promise<void>
  abstract stats(): SlotStats
  abstract markFailed(reason: string): Promise<void>
  abstract close(): Promise<void>
  /** Queues the frame, or returns FULL. Throws for a closed slot or an oversized frame. */
  protected abstract tryAppend(payload: Payload): Promise<bigint> | typeof FULL
  /** Why the slot is full, for error messages. */
  protected abstract describeFull(): string

  append(payload: Payload): Promise<bigint> {
    try {
      const queued = this.tryAppend(payload)
      if (queued !== FULL) return queued
      this.backpressureStalls++
      return Promise.reject(new SlotFullError(this.describeFull()))
    } catch (e) {
      return Promise.reject(e)
    }
  }

  async appendBlocking(payload: Payload): Promise<bigint> {
    let queued = this.tryAppend(payload)
    if (queued !== FULL) return queued
    this.backpressureStalls++
    const ackedAtStart = this.ackedFsn
    const deadline = performance.now() + this.base.appendDeadlineMs
    for (;;) {
      const left = deadline - performance.now()
      if (left <= 0) throw new AppendDeadlineError(this.base.appendDeadlineMs, this.stallReason(ackedAtStart))
      await this.spaceOrTimeout(left)
      queued = this.tryAppend(payload)
      if (queued !== FULL) return queued
    }
  }

  onPublished(listener: (publishedFsn: bigint) => void): () => void {
    this.publishedListeners.add(listener)
    return () => this.publishedListeners.delete(listener)
  }

  onAcked(listener: (ackedFsn: bigint) => void): () => void {
    this.ackedListeners.add(listener)
    return () => this.ackedListeners.delete(listener)
  }

  protected emitPublished(fsn: bigint): void {
    this.notify(this.publishedListeners, fsn)
  }

  protected emitAcked(fsn: bigint): void {
    this.notify(this.ackedListeners, fsn)
  }

  /** Space may have been freed (or the slot closed): blocked appenders try again. */
  protected wakeAppenders(): void {
    for (const wake of [...this.spaceWaiters]) wake()
  }

  private stallReason(ackedAtStart: bigint): string {
    const acked = this.ackedFsn
    const progress =
      acked === ackedAtStart
        ? `no ack arrived while waiting (ackedFsn stayed ${acked}; is the receiver reachable?)`
        : `acks advanced from ${ackedAtStart} to ${acked}, slower than appends (the receiver is slower than the producer)`
    const extra = this.base.describeStall?.()
    return `${this.describeFull()}; ${progress}${extra ? `; ${extra}` : ''}`
  }

  private spaceOrTimeout(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.spaceWaiters.delete(done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.spaceWaiters.add(done)
    })
  }

  private notify(listeners: Set<(fsn: bigint) => void>, fsn: bigint): void {
    for (const listener of listeners) {
      try {
        listener(fsn)
      } catch (e) {
        this.base.logger.error(`a slot progress listener threw: ${(e as Error)?.message ?? e}`)
      }
    }
  }
}
