/**
 * The memory slot: the slot API without a disk, for senders without `sf_dir`. Frames live in the process
 * and are lost when it exits. `maxTotalBytes` (default 128 MiB) caps the bytes of unacked frames
 * (payload + 8-byte frame header each), so an outage cannot silently grow the heap.
 */
import { randomUUID } from 'node:crypto'
import {
  BaseSlot,
  FULL,
  type Payload,
  payloadLength,
  payloadPieces,
  type Slot,
  type SlotFrame,
  type SlotStats,
} from './base-slot.js'
import { AckOutOfRangeError, SlotClosedError, SlotOptionError } from './errors.js'
import { FRAME_HEADER_BYTES } from './format.js'
import { defaultLogger, type SlotLogger } from './logger.js'

export interface MemorySlotOptions {
  /** Default 128 MiB. */
  maxTotalBytes?: number
  /** How long appendBlocking waits for space. Default 30 s. */
  appendDeadlineMs?: number
  describeStall?: () => string
  logger?: SlotLogger
}

export function openMemorySlot(options: MemorySlotOptions = {}): Slot {
  return new MemorySlot(options)
}

class MemorySlot extends BaseSlot {
  /** New with every memory slot: its frames, numbered from 1, are never another process's. */
  readonly slotId = randomUUID()
  /** Unacked frames; `head` is the index of the first one (the array is compacted now and then). */
  private frames: Uint8Array[] = []
  private head = 0
  /** FSN of frames[head]. */
  private firstFsn = 1n
  private bytes = 0
  private readonly maxTotalBytes: number
  private appends = 0
  private closed = false

  constructor(options: MemorySlotOptions) {
    super({
      appendDeadlineMs: options.appendDeadlineMs ?? 30_000,
      describeStall: options.describeStall,
      logger: options.logger ?? defaultLogger,
    })
    this.maxTotalBytes = options.maxTotalBytes ?? 128 * 1024 * 1024
    if (!(this.maxTotalBytes > 0))
      throw new SlotOptionError('maxTotalBytes', `${this.maxTotalBytes} must be positive`)
  }

  get publishedFsn(): bigint {
    return this.firstFsn + BigInt(this.frames.length - this.head) - 1n
  }

  get ackedFsn(): bigint {
    return this.firstFsn - 1n
  }

  protected tryAppend(payload: Payload): Promise<bigint> | typeof FULL {
    if (this.closed) throw new SlotClosedError('(memory)', 'it was closed')
    const size = FRAME_HEADER_BYTES + payloadLength(payload)
    if (this.bytes + size > this.maxTotalBytes) return FULL
    this.frames.push(Buffer.concat(payloadPieces(payload)))
    this.bytes += size
    this.appends++
    const fsn = this.publishedFsn
    this.emitPublished(fsn)
    return Promise.resolve(fsn)
  }

  protected describeFull(): string {
    return (
      `${this.bytes} bytes of unacked frames reach maxTotalBytes ${this.maxTotalBytes} ` +
      `(ackedFsn ${this.ackedFsn}, publishedFsn ${this.publishedFsn})`
    )
  }

  async *replay(fromFsn = 0n): AsyncGenerator<SlotFrame> {
    let next = fromFsn
    for (;;) {
      if (next < this.firstFsn) next = this.firstFsn
      if (next > this.publishedFsn) return
      const payload = this.frames[this.head + Number(next - this.firstFsn)]!
      yield { fsn: next, payload: payload.slice() }
      next++
    }
  }

  /** Memory has no segments: acked frames are freed at once. */
  async seal(): Promise<void> {}

  async ack(fsn: bigint): Promise<void> {
    if (fsn > this.publishedFsn) throw new AckOutOfRangeError(fsn, this.publishedFsn)
    if (fsn <= this.ackedFsn) return
    while (this.firstFsn <= fsn) {
      this.bytes -= FRAME_HEADER_BYTES + this.frames[this.head]!.length
      this.frames[this.head++] = EMPTY
      this.firstFsn++
    }
    if (this.head > 1024 && this.head * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.head)
      this.head = 0
    }
    this.emitAcked(fsn)
    this.wakeAppenders()
  }

  stats(): SlotStats {
    return {
      durability: 'none',
      segments: 0,
      totalBytes: this.bytes,
      maxTotalBytes: this.maxTotalBytes,
      publishedFsn: this.publishedFsn,
      ackedFsn: this.ackedFsn,
      appends: this.appends,
      syncs: 0,
      backpressureStalls: this.backpressureStalls,
      tornTailBytes: 0,
      dataLoss: [],
    }
  }

  /** Nothing outlives the process, so there is no sentinel to write. */
  async markFailed(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true
    this.wakeAppenders()
  }
}

const EMPTY = new Uint8Array(0)
