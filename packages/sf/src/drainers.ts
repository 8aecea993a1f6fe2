/**
 * Orphan adoption: with `drain_orphans=on`, a sender drains sibling slots under `sf_dir` that a dead
 * sender left with unacknowledged data. Each drainer takes that slot's lock (a busy slot is skipped, never
 * stolen), forwards it with its own connection under the orphan's sender id, and exits once everything is
 * acknowledged. A drainer that cannot finish — reconnect budget exhausted, authentication refused, corrupt
 * slot — writes `.failed` with the reason, so later scans leave the slot to an operator.
 */
import path from 'node:path'
import { Forwarder } from './forwarder.js'
import { nodeFs, replaceFileDurably } from './io.js'
import type { Endpoint } from './link.js'
import { listOrphanSlots } from './orphans.js'
import type { SenderConfig } from './sender-config.js'
import type { SenderCounters } from './sender-counters.js'
import { FAILED_FILE, type Slot } from './slot.js'

export type DrainerEvent =
  | { type: 'started'; senderId: string; ackedFsn: bigint; publishedFsn: bigint }
  | { type: 'progress'; senderId: string; ackedFsn: bigint; publishedFsn: bigint }
  | { type: 'succeeded'; senderId: string; publishedFsn: bigint }
  | { type: 'failed'; senderId: string; error: Error }
  | { type: 'skipped'; senderId: string; reason: string }

export class DrainerPool {
  private stopping = false
  private readonly running = new Set<Forwarder>()
  private done: Promise<void> = Promise.resolve()

  constructor(
    private readonly config: SenderConfig,
    private readonly openOrphan: (senderId: string) => Promise<Slot>,
    private readonly endpoint: Endpoint,
    private readonly counters: SenderCounters,
    private readonly postError: (error: Error) => void,
    private readonly listener: (event: DrainerEvent) => void,
  ) {}

  /** Scans `sf_dir` once and drains what it finds, `max_background_drainers` at a time. */
  start(): void {
    this.done = this.run().catch((e) => this.postError(e as Error))
  }

  /** Stops running drainers; their slots keep the undelivered data for a later sender. */
  async stop(): Promise<void> {
    this.stopping = true
    await Promise.all([...this.running].map((f) => f.stop()))
    await this.done
  }

  private async run(): Promise<void> {
    const queue = await listOrphanSlots(this.config.sfDir!, this.config.senderId)
    const worker = async (): Promise<void> => {
      for (let id = queue.shift(); id !== undefined && !this.stopping; id = queue.shift())
        await this.drain(id)
    }
    await Promise.all(
      Array.from({ length: Math.min(this.config.maxBackgroundDrainers, queue.length) }, worker),
    )
  }

  private async drain(senderId: string): Promise<void> {
    let slot: Slot
    try {
      slot = await this.openOrphan(senderId)
    } catch (e) {
      if ((e as { code?: unknown }).code === 'SF_SLOT_LOCKED') {
        this.emit({ type: 'skipped', senderId, reason: (e as Error).message })
      } else {
        await this.fail(senderId, e as Error, undefined)
      }
      return
    }
    if (this.stopping) {
      await slot.close()
      return
    }
    this.counters.activeBackgroundDrainers++
    const forwarder = new Forwarder(slot, {
      endpoint: this.endpoint,
      wireSenderId: senderId,
      requestDurableAck: this.config.requestDurableAck,
      backoff: {
        initialMs: this.config.reconnectInitialBackoffMillis,
        maxMs: this.config.reconnectMaxBackoffMillis,
      },
      keepaliveMs: this.config.keepaliveIntervalMillis,
      reconnectBudgetMs: this.config.reconnectMaxDurationMillis,
      counters: this.counters,
      onError: (error) => {
        // The terminal error is reported once, as the drainer's failure, below.
        if (error !== forwarder.terminalError) this.postError(error)
      },
      onAcked: (ackedFsn) =>
        this.emit({ type: 'progress', senderId, ackedFsn, publishedFsn: slot.publishedFsn }),
    })
    this.running.add(forwarder)
    this.emit({ type: 'started', senderId, ackedFsn: slot.ackedFsn, publishedFsn: slot.publishedFsn })
    try {
      await forwarder.waitAcked(slot.publishedFsn)
      this.emit({ type: 'succeeded', senderId, publishedFsn: slot.publishedFsn })
      this.counters.totalBackgroundDrainersSucceeded++
    } catch (e) {
      if (!this.stopping) await this.fail(senderId, e as Error, slot)
    } finally {
      this.running.delete(forwarder)
      await forwarder.stop()
      await slot.close()
      this.counters.activeBackgroundDrainers--
    }
  }

  private async fail(senderId: string, error: Error, slot: Slot | undefined): Promise<void> {
    try {
      // A slot that would not even open (corrupt) gets its sentinel written directly.
      if (slot) await slot.markFailed(error.message)
      else
        await replaceFileDurably(
          nodeFs,
          path.join(this.config.sfDir!, senderId),
          FAILED_FILE,
          Buffer.from(error.message),
        )
    } catch (e) {
      this.postError(e as Error)
    }
    this.postError(error)
    this.emit({ type: 'failed', senderId, error })
    this.counters.totalBackgroundDrainersFailed++
  }

  private emit(event: DrainerEvent): void {
    try {
      this.listener(event)
    } catch (e) {
      this.postError(e as Error)
    }
  }
}
