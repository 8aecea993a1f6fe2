/**
 * The I/O loop that forwards one slot to a receiver: connect, replay everything unacknowledged from
 * `ackedFsn + 1` straight from the slot (never holding the backlog in memory), follow new appends, persist
 * acks, and on a broken connection retry with backoff — forever, or within a budget for orphan drainers.
 * Terminal errors (HALT, auth, protocol, corruption) stop it and are latched.
 */
import { type BackoffPolicy, backoffDelay } from './backoff.js'
import {
  ProtocolViolationError,
  ReceiverFrameLimitError,
  ReconnectBudgetError,
  SenderClosedError,
  SenderServerError,
} from './errors.js'
import { type Endpoint, Link } from './link.js'
import { LONE_RECORD_BYTES, type RecentFrames } from './recent-frames.js'
import type { SenderCounters } from './sender-counters.js'
import type { Slot } from './slot.js'
import { dataMessageBytes, type ErrorCategory, encodeData, loneDataMessage } from './wire.js'

export interface ForwarderOptions {
  endpoint: Endpoint
  /** The id announced in HELLO; the receiver dedups by it. */
  wireSenderId: string
  requestDurableAck: boolean
  backoff: BackoffPolicy
  keepaliveMs: number
  /** Give up (terminal error) after failing to reconnect for this long; undefined retries forever. */
  reconnectBudgetMs: number | undefined
  counters: SenderCounters
  /** DROP errors and the terminal error, for the error inbox. */
  onError(error: Error): void
  onAcked?(ackedFsn: bigint): void
  /** Payloads the sender just appended; frames held there are sent without reading the slot. */
  recent?: RecentFrames
}

/** Not connected: since when, the connection attempt in progress (1-based), and the last failure. */
export interface Outage {
  since: Date
  attempt: number
  lastError: Error | undefined
}

/** Bytes per DATA message the forwarder aims for (less if the receiver accepts less). */
const BATCH_BYTES = 256 * 1024

interface AckWaiter {
  fsn: bigint
  resolve(): void
  reject(e: Error): void
}

export class Forwarder {
  private stopping = false
  private terminal: Error | undefined
  /** Set while not connected; starts with the first connection attempt. */
  private outageState: Outage | undefined = { since: new Date(), attempt: 1, lastError: undefined }
  /** Whether the current outage was counted as a reconnect attempt (the first connect counts once it fails). */
  private outageCounted = false
  private link: Link | undefined
  /** Highest FSN sent on any connection of this forwarder, to count replays. */
  private highestSent = 0n
  private ackTarget: bigint
  private acking: Promise<void> | undefined
  /** Wakes the pump (new frames, link ended, stop). */
  private wakers: Array<() => void> = []
  /** Cuts a backoff sleep short (stop, terminal error). */
  private interruptSleep: (() => void) | undefined
  private readonly ackWaiters = new Set<AckWaiter>()
  private readonly unsubscribe: () => void
  readonly done: Promise<void>

  constructor(
    private readonly slot: Slot,
    private readonly options: ForwarderOptions,
  ) {
    this.ackTarget = slot.ackedFsn
    this.unsubscribe = slot.onPublished(() => this.wake())
    this.done = this.run()
  }

  get terminalError(): Error | undefined {
    return this.terminal
  }

  get outage(): Outage | undefined {
    return this.outageState
  }

  /** Resolves once every frame up to `fsn` is acknowledged (durably, if requested). */
  waitAcked(fsn: bigint): Promise<void> {
    if (this.slot.ackedFsn >= fsn) return Promise.resolve()
    if (this.terminal) return Promise.reject(this.terminal)
    if (this.stopping) return Promise.reject(new SenderClosedError())
    return new Promise((resolve, reject) => this.ackWaiters.add({ fsn, resolve, reject }))
  }

  async stop(): Promise<void> {
    this.stopping = true
    this.link?.close()
    this.interruptSleep?.()
    this.wake()
    await this.done
    await this.acking
    this.unsubscribe()
    this.settleWaiters(new SenderClosedError())
  }

  private async run(): Promise<void> {
    while (!this.stopping && !this.terminal) {
      let failure: Error
      try {
        failure = await this.session()
      } catch (e) {
        failure = e as Error
      }
      if (this.stopping || this.terminal) break
      if (isTerminal(failure)) {
        this.latch(failure)
        break
      }
      await this.backOff(failure)
    }
  }

  /** One connection, from the upgrade until it ends; returns (or throws) why it ended. */
  private async session(): Promise<Error> {
    const link = Link.connect(
      this.options.endpoint,
      this.options.wireSenderId,
      this.slot.slotId,
      this.options.requestDurableAck,
      this.options.keepaliveMs,
      {
        onAck: (fsn, durable) => this.onAck(link, fsn, durable),
        onServerError: (category, fsn, message) => this.onServerError(category, fsn, message),
        onClose: () => this.wake(),
      },
    )
    this.link = link
    try {
      await link.ready
      if (this.outageCounted) this.options.counters.totalReconnectsSucceeded++
      this.outageState = undefined
      this.outageCounted = false
      await this.pump(link)
    } catch (e) {
      // A graceful close still delivers what was queued before the error.
      link.fail(e as Error, 1000)
      throw e
    } finally {
      this.link = undefined
    }
    if (link.isOpen) link.fail(new SenderClosedError(), 1000)
    return link.closed
  }

  /** Sends from `ackedFsn + 1` on, then follows new appends, until the link ends. */
  private async pump(link: Link): Promise<void> {
    let next = this.slot.ackedFsn + 1n
    while (link.isOpen && !this.stopping && !this.terminal) {
      if (next > this.slot.publishedFsn) {
        await new Promise<void>((resolve) => this.wakers.push(resolve))
        // Let the appends that were just published hand their payloads to `recent` first.
        await new Promise<void>((resolve) => setImmediate(resolve))
        continue
      }
      next = await this.sendFrom(link, next)
    }
  }

  /**
   * Streams frames starting at `from` in DATA messages, from `recent` while it holds them, else from the
   * slot until a frame `recent` holds; returns the next FSN to send.
   */
  private async sendFrom(link: Link, from: bigint): Promise<bigint> {
    const recent = this.options.recent
    recent?.dropBelow(from)
    const fromMemory = recent?.has(from) === true
    const frames = fromMemory ? recent!.takeFrom(from) : this.slot.replay(from)
    const limit = link.maxFrameBytes
    const target = Math.min(limit, BATCH_BYTES)
    let batch: Uint8Array[] = []
    let batchBytes = 0
    let first = from
    let next = from
    for await (const { fsn, payload } of frames) {
      if (!link.isOpen || this.stopping || this.terminal) return next
      if (!fromMemory && recent?.has(fsn)) break
      const alone = dataMessageBytes(payload.length, 1)
      if (alone > limit) {
        // Deliver everything before the record that can never be delivered, then stop.
        if (batch.length > 0) await this.sendBatch(link, first, batch)
        throw new ReceiverFrameLimitError(fsn, alone, limit)
      }
      // A large record in memory already sits in a DATA message of its own (privateCopy).
      const lone = fromMemory && payload.length >= LONE_RECORD_BYTES
      // A DATA message carries consecutive FSNs; the slot skips a range only where recovery reported loss.
      const gap = fsn !== next
      if (
        batch.length > 0 &&
        (gap || lone || dataMessageBytes(batchBytes + payload.length, batch.length + 1) > target)
      ) {
        await this.sendBatch(link, first, batch)
        batch = []
        batchBytes = 0
      }
      next = fsn + 1n
      if (lone) {
        await this.sendMessage(link, fsn, fsn, loneDataMessage(payload, fsn))
        continue
      }
      if (batch.length === 0) first = fsn
      batch.push(payload)
      batchBytes += payload.length
    }
    if (batch.length > 0 && link.isOpen) await this.sendBatch(link, first, batch)
    return next
  }

  private sendBatch(link: Link, first: bigint, payloads: Uint8Array[]): Promise<void> {
    return this.sendMessage(link, first, first + BigInt(payloads.length) - 1n, encodeData(first, payloads))
  }

  /** Sends a DATA message carrying FSNs `first` to `last`, then waits until the link can take more. */
  private async sendMessage(link: Link, first: bigint, last: bigint, message: Buffer): Promise<void> {
    if (first <= this.highestSent) {
      const upTo = last < this.highestSent ? last : this.highestSent
      this.options.counters.totalFramesReplayed += Number(upTo - first + 1n)
    }
    if (last > this.highestSent) this.highestSent = last
    link.send(message)
    await link.writable()
  }

  private onAck(link: Link, fsn: bigint, durable: boolean): void {
    if (fsn > this.slot.publishedFsn) {
      link.fail(
        new ProtocolViolationError(
          `receiver acknowledged FSN ${fsn}, beyond the last FSN written (${this.slot.publishedFsn})`,
        ),
        1002,
      )
      return
    }
    if (durable !== this.options.requestDurableAck || fsn <= this.ackTarget) return
    this.ackTarget = fsn
    this.acking ??= this.persistAcks()
  }

  /** Acks are persisted one at a time; acks arriving meanwhile are folded into the next call. */
  private async persistAcks(): Promise<void> {
    try {
      while (this.slot.ackedFsn < this.ackTarget && !this.stopping) {
        await this.slot.ack(this.ackTarget)
        this.options.onAcked?.(this.slot.ackedFsn)
        this.settleWaiters()
      }
    } catch (e) {
      this.latch(e as Error)
    } finally {
      this.acking = undefined
    }
  }

  private onServerError(category: ErrorCategory, fsn: bigint, message: string): void {
    this.options.counters.totalServerErrors++
    const error = new SenderServerError(category, fsn, message)
    if (category === 'HALT') this.latch(error)
    else this.options.onError(error)
  }

  private async backOff(failure: Error): Promise<void> {
    const now = new Date()
    this.outageState ??= { since: now, attempt: 1, lastError: undefined }
    if (!this.outageCounted) {
      this.outageCounted = true
      this.options.counters.totalReconnectAttempts++
    }
    const outage = this.outageState
    outage.lastError = failure
    const budget = this.options.reconnectBudgetMs
    if (budget !== undefined && now.getTime() - outage.since.getTime() >= budget) {
      this.latch(
        new ReconnectBudgetError(this.options.endpoint.addr, budget, outage.since, { cause: failure }),
      )
      return
    }
    outage.attempt++
    const delay = backoffDelay(this.options.backoff, outage.attempt)
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay)
      this.interruptSleep = () => {
        clearTimeout(timer)
        resolve()
      }
    })
    this.interruptSleep = undefined
  }

  private latch(error: Error): void {
    if (this.terminal) return
    this.terminal = error
    this.options.counters.lastTerminalError = error
    this.options.onError(error)
    this.link?.fail(error, 1000)
    this.settleWaiters(error)
    this.interruptSleep?.()
    this.wake()
  }

  private settleWaiters(error?: Error): void {
    for (const w of this.ackWaiters) {
      if (this.slot.ackedFsn >= w.fsn) w.resolve()
      else if (error) w.reject(error)
      else continue
      this.ackWaiters.delete(w)
    }
  }

  private wake(): void {
    for (const w of this.wakers.splice(0)) w()
  }
}

/** Connection-level failures are retried; anything this package classifies with its own code is final. */
function isTerminal(error: Error): boolean {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && code.startsWith('SF_') && code !== 'SF_CONNECTION_LOST'
}
