/**
 * The store-and-forward sender: records are appended to a slot (on disk with `sf_dir`, in memory without)
 * and a forwarder delivers them to a receiver over WebSocket, trimming them when acknowledged.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { type DrainerEvent, DrainerPool } from './drainers.js'
import { defaultErrorHandler, type ErrorHandler, ErrorInbox } from './error-inbox.js'
import {
  SenderBackpressureError,
  SenderClosedError,
  SenderCloseTimeoutError,
  SenderConfigError,
} from './errors.js'
import { Forwarder, type Outage } from './forwarder.js'
import type { Endpoint } from './link.js'
import { openMemorySlot } from './memory-slot.js'
import { privateCopy, RecentFrames } from './recent-frames.js'
import { type SenderConfig, type SenderOptions, senderConfigFrom } from './sender-config.js'
import { newCounters, type SenderCounters } from './sender-counters.js'
import { openSlot, type Slot } from './slot.js'

export interface SenderHandlers {
  /**
   * Receives DROP errors, the HALT error and any other terminal error. Default: HALT and terminal errors
   * logged at error level, DROP at warn level.
   */
  onError?: ErrorHandler
  /** Progress and outcome of each orphan drainer. */
  onDrainerEvent?: (event: DrainerEvent) => void
}

/** Bytes of just-appended payloads kept for the forwarder, so it rarely reads back from disk. */
const RECENT_FRAMES_BYTES = 16 * 1024 * 1024

/** How long `close()` lets queued error notifications reach the handler. */
const INBOX_SETTLE_MS = 1000

export class Sender {
  private closing: Promise<void> | undefined
  private terminalDelivered = false

  private constructor(
    private readonly config: SenderConfig,
    private readonly slot: Slot,
    private readonly forwarder: Forwarder,
    private readonly inbox: ErrorInbox,
    private readonly stats: SenderCounters,
    private readonly drainers: DrainerPool | undefined,
    private readonly recent: RecentFrames | undefined,
  ) {}

  /**
   * Opens the slot (taking its lock), starts forwarding, and with `drain_orphans=on` starts draining
   * orphan slots. `config` is a connect string (`ws::addr=host:port;sf_dir=…;`) or an options object.
   */
  static async fromConfig(config: string | SenderOptions, handlers: SenderHandlers = {}): Promise<Sender> {
    const resolved = senderConfigFrom(config)
    const endpoint = endpointOf(resolved)
    const counters = newCounters()
    const inbox = new ErrorInbox(
      resolved.errorInboxCapacity,
      handlers.onError ?? defaultErrorHandler,
      counters,
    )
    const slot = await openSenderSlot(resolved, resolved.senderId)
    // The memory slot replays from memory already.
    const recent = resolved.sfDir === undefined ? undefined : new RecentFrames(RECENT_FRAMES_BYTES)
    const forwarder = new Forwarder(slot, {
      endpoint,
      // Memory-mode FSNs restart at 1 with every process, so each process is a new sender to the receiver.
      wireSenderId:
        resolved.sfDir === undefined
          ? `${resolved.senderId}.mem-${randomBytes(6).toString('hex')}`
          : resolved.senderId,
      requestDurableAck: resolved.requestDurableAck,
      backoff: {
        initialMs: resolved.reconnectInitialBackoffMillis,
        maxMs: resolved.reconnectMaxBackoffMillis,
      },
      keepaliveMs: resolved.keepaliveIntervalMillis,
      reconnectBudgetMs: undefined,
      counters,
      onError: (e) => inbox.post(e),
      recent,
    })
    const drainers = resolved.drainOrphans
      ? new DrainerPool(
          resolved,
          (id) => openSenderSlot(resolved, id),
          endpoint,
          counters,
          (e) => inbox.post(e),
          handlers.onDrainerEvent ?? (() => {}),
        )
      : undefined
    drainers?.start()
    return new Sender(resolved, slot, forwarder, inbox, counters, drainers, recent)
  }

  get senderId(): string {
    return this.config.senderId
  }

  /** The slot's identity, announced with the sender id (new per process in memory mode). */
  get slotId(): string {
    return this.slot.slotId
  }

  /** FSN of the last record appended. */
  get publishedFsn(): bigint {
    return this.slot.publishedFsn
  }

  /** FSN up to which the receiver acknowledged (durably, with `request_durable_ack=on`). */
  get ackedFsn(): bigint {
    return this.slot.ackedFsn
  }

  /** A snapshot of the counters. */
  counters(): SenderCounters {
    if (!this.closing) this.stats.totalBackpressureStalls = this.slot.stats().backpressureStalls
    return { ...this.stats }
  }

  /** Appends a record; throws `SF_BACKPRESSURE` at once if the slot is full. Resolves with its FSN. */
  async send(payload: Uint8Array): Promise<bigint> {
    this.checkUsable()
    try {
      return await this.remembered(payload, (p) => this.slot.append(p))
    } catch (e) {
      throw this.explainFull(e)
    }
  }

  /** Appends a record, waiting up to `sf_append_deadline_millis` for space when the slot is full. */
  async sendBlocking(payload: Uint8Array): Promise<bigint> {
    this.checkUsable()
    try {
      return await this.remembered(payload, (p) => this.slot.appendBlocking(p))
    } catch (e) {
      throw this.explainFull(e)
    }
  }

  /** Resolves when every record appended so far is acknowledged; rejects with a latched terminal error. */
  async flush(): Promise<void> {
    this.checkUsable()
    try {
      await this.forwarder.waitAcked(this.slot.publishedFsn)
    } catch (e) {
      throw this.deliver(e as Error)
    }
  }

  /**
   * Waits up to `close_flush_timeout_millis` for everything to be acknowledged, stops forwarding and
   * drainers, and releases the slot. Rejects with a latched terminal error that was not delivered yet,
   * else with `SF_CLOSE_TIMEOUT` if the wait ran out. Unacked records stay in the slot (SF mode).
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown()
    return this.closing
  }

  private async shutdown(): Promise<void> {
    const timeoutMs = this.config.closeFlushTimeoutMillis
    const target = this.slot.publishedFsn
    const acked =
      timeoutMs <= 0 || this.forwarder.terminalError || (await this.acknowledgedWithin(target, timeoutMs))
    // A wait cut short by a terminal error is reported as that error, not as a timeout.
    const timedOut = !acked && !this.forwarder.terminalError
    await this.drainers?.stop()
    await this.forwarder.stop()
    await this.inbox.settle(INBOX_SETTLE_MS)
    const unacked = this.slot.publishedFsn - this.slot.ackedFsn
    this.stats.totalBackpressureStalls = this.slot.stats().backpressureStalls
    await this.slot.close()
    const terminal = this.forwarder.terminalError
    if (terminal && !this.terminalDelivered && !this.inbox.wasDelivered(terminal))
      throw this.deliver(terminal)
    if (timedOut) {
      throw new SenderCloseTimeoutError(
        timeoutMs,
        unacked,
        this.config.sfDir === undefined
          ? 'memory mode: those records are lost'
          : `they stay in ${this.config.sfDir}/${this.config.senderId} and are sent by the next sender on this slot`,
      )
    }
  }

  private async acknowledgedWithin(fsn: bigint, ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms)
    })
    const acked = this.forwarder.waitAcked(fsn).then(
      () => true,
      () => false,
    )
    try {
      return await Promise.race([acked, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Appends one private copy of the payload, so the caller may reuse its buffer at once, and offers it to
   * the forwarder's in-memory fast path: what is sent from memory is exactly what the slot holds.
   */
  private async remembered(
    payload: Uint8Array,
    append: (payload: Uint8Array) => Promise<bigint>,
  ): Promise<bigint> {
    const copy = privateCopy(payload)
    const held = this.recent?.hold(copy) === true
    try {
      const fsn = await append(copy)
      if (held) this.recent!.offer(fsn, copy)
      return fsn
    } catch (e) {
      if (held) this.recent!.release(copy)
      throw e
    }
  }

  private checkUsable(): void {
    if (this.closing) throw new SenderClosedError()
    const terminal = this.forwarder.terminalError
    if (terminal) throw this.deliver(terminal)
  }

  /** Marks the terminal error as delivered through a producer call. */
  private deliver(error: Error): Error {
    if (error === this.forwarder.terminalError) this.terminalDelivered = true
    return error
  }

  /** Turns the slot's "full" errors into ones that say why the slot is full. */
  private explainFull(e: unknown): unknown {
    const code = (e as { code?: unknown }).code
    if (code !== 'SF_BACKPRESSURE' && code !== 'SF_APPEND_DEADLINE') return e
    const stats = this.slot.stats()
    const head =
      code === 'SF_APPEND_DEADLINE'
        ? `sendBlocking waited ${this.config.sfAppendDeadlineMillis ?? 'the append deadline'} ms for space in the full slot (${stats.totalBytes} of ${stats.maxTotalBytes} bytes)`
        : `the slot is full (${stats.totalBytes} of ${stats.maxTotalBytes} bytes)`
    const outage: Outage | undefined = this.forwarder.outage
    if (outage) {
      const last = outage.lastError ? ` (last error: ${outage.lastError.message})` : ''
      return new SenderBackpressureError(
        code,
        'reconnecting',
        `${head}: the sender has been reconnecting to ${this.config.host}:${this.config.port} since ${outage.since.toISOString()}, attempt ${outage.attempt}${last}; fix the receiver or the network, or raise sf_max_total_bytes`,
        { cause: e },
      )
    }
    return new SenderBackpressureError(
      code,
      'server-slower',
      `${head}: the receiver is acknowledging (acked FSN ${this.slot.ackedFsn} of ${this.slot.publishedFsn}) but slower than records are sent; slow the producer, scale the receiver, or raise sf_max_total_bytes`,
      { cause: e },
    )
  }
}

export function endpointOf(config: SenderConfig): Endpoint {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  let ca: Buffer | undefined
  if (config.tlsRoots !== undefined) {
    try {
      ca = readFileSync(config.tlsRoots)
    } catch (e) {
      throw new SenderConfigError('tls_roots', `cannot read ${config.tlsRoots}: ${(e as Error).message}`)
    }
  }
  return {
    url: `${config.tls ? 'wss' : 'ws'}://${host}:${config.port}/`,
    addr: `${host}:${config.port}`,
    token: config.token,
    ca,
    rejectUnauthorized: config.tlsVerify,
  }
}

/** Opens the slot a sender (or drainer) forwards: on disk under sf_dir, else in memory. */
export function openSenderSlot(config: SenderConfig, senderId: string): Promise<Slot> {
  if (config.sfDir === undefined) {
    return Promise.resolve(
      openMemorySlot({
        maxTotalBytes: config.sfMaxTotalBytes,
        appendDeadlineMs: config.sfAppendDeadlineMillis,
      }),
    )
  }
  return openSlot({
    sfDir: config.sfDir,
    senderId,
    maxSegmentBytes: config.sfMaxSegmentBytes,
    maxTotalBytes: config.sfMaxTotalBytes,
    appendDeadlineMs: config.sfAppendDeadlineMillis,
    durability: config.sfDurability,
  })
}
