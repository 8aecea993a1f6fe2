/**
 * The durable slot: `<sfDir>/<senderId>/`.
 *
 *   .lock, .lock.pid     compatibility files for other clients, never deleted (lock.ts)
 *   .lock.owner/         the lock: owner.json (host, PID, instance, heartbeat) (lock.ts)
 *   .failed              optional: UTF-8 reason a drainer gave up; orphan scans skip the slot
 *   .ack-watermark       optional: 16-byte cumulative acked FSN (watermark.ts, format.ts)
 *   .slot-id             the slot's identity, a UUID made with it (slot-identity.ts)
 *   sf-<16 hex gen>.sfa  segments: 32-byte header + frames [crc32c][length][payload], then zeros (or, in a
 *                        reused file, what its previous use left) up to the preallocated file size; once
 *                        the writer has moved on to the next segment, its last 32 bytes hold the seal if
 *                        the frames left them free (format.ts)
 *   sf-<gen>.sfa         (the highest generation, blank header) the spare: the next segment, prepared ahead
 *                        of the writer as `.tmp` (a fresh zero-filled file, or a retired one whose header
 *                        is zeroed), then renamed; recovery deletes spares and `.tmp` files
 *   sf-<gen>.sfa.tmp     a trimmed segment retired for reuse as a later spare (writer.ts)
 *
 * Invariants:
 *  1. FSNs are consecutive within a segment (FSN = baseSeq + index) and segments continue one another,
 *     except across a range recovery reported as data loss. FSNs never go backwards while the directory
 *     exists: after a full drain the watermark keeps the last one.
 *  2. publishedFsn only covers frames on disk: fdatasync'd in 'append' mode, written in the others. A
 *     reader never sees, and an ack never names, a frame that a crash could take back in 'append' mode.
 *  3. Frames reach a new segment only after the previous one is fdatasync'd, so a crash leaves at most a
 *     torn tail (or an unused, all-zero spare) after the last durable frame.
 *  4. A segment is deleted (or retired) only when all its frames are at or below the durable watermark.
 *  5. Segment files (+ the spare and retired files) never exceed maxTotalBytes: appends are planned
 *     against that budget when they are queued, in the order the writer lays them out (writer.ts).
 *  6. One writer per file: all segment writes go through one flush loop; appends queued while a write or
 *     fdatasync runs share the next one (group commit, writer.ts).
 *  7. After a failed write or fdatasync the slot stops (fail-stop): the page cache can no longer be trusted
 *     to match the disk, so only reopening (recovery) may continue. Disk full while creating a segment is
 *     the exception: nothing was written, the appends fail with SF_DISK_FULL and the slot carries on. With
 *     `preallocate: 'sparse'` a full disk shows in a write instead, and stops the slot.
 *  8. A seal (frame count and end) is written only into a segment that gets no more frames, after its
 *     frames are durable (invariant 3), and a sealed segment is never appended to. So a valid seal states
 *     exactly what the segment held when it was sealed.
 *
 * Where this departs from the seed's recovery: the seed walks every frame of every segment at open,
 * checking CRCs. Here recovery walks only unsealed segments (the one that was active, the only place a
 * torn tail can be, and any whose seal is missing) and takes a sealed segment's count and end from its
 * seal, which makes opening a large slot cost two small reads per segment instead of reading it all.
 * The frames of a sealed segment are checked when replay reads them, as every frame is; a frame failing
 * there is reported exactly as recovery reports damage (logger.error and stats().dataLoss, FSNs from it
 * to the segment's last) and replay continues with the next segment. So damage in a sealed segment
 * surfaces when replay reaches it rather than at open, never as wrong bytes, and with the same exact
 * FSN range. A damaged seal fails its CRC and the segment is walked as before.
 */
import path from 'node:path'
import {
  BaseSlot,
  type Durability,
  type FULL,
  type Payload,
  type Preallocate,
  type Slot,
  type SlotFrame,
  type SlotStats,
} from './base-slot.js'
import { AckOutOfRangeError, CorruptFrameError, SlotClosedError, SlotOptionError } from './errors.js'
import { errorCode, nodeFs, replaceFileDurably, type SlotFile, type SlotFs, writeFully } from './io.js'
import { SlotLock } from './lock.js'
import { defaultLogger, type SlotLogger } from './logger.js'
import { type DataLossRange, type Recovered, recoverSlot, reportDataLoss } from './recovery.js'
import { FrameReader, lastFsn, noteFrame, type Segment, seek } from './segment.js'
import { loadSlotId } from './slot-identity.js'
import { writeWatermark } from './watermark.js'
import { type ActiveSegment, ioError, SegmentWriter } from './writer.js'

export type { Durability, Payload, Slot, SlotFrame, SlotStats } from './base-slot.js'

export const FAILED_FILE = '.failed'
const MiB = 1024 * 1024

export interface SlotOptions {
  /** The group root; the slot is `<sfDir>/<senderId>/`. */
  sfDir: string
  senderId?: string
  /** Segment file size, the unit of preallocation and trim. Default 4 MiB. */
  maxSegmentBytes?: number
  /** Cap on segment files on disk (incl. the spare). Default 10 GiB; at least 2 segments. */
  maxTotalBytes?: number
  /** How long appendBlocking waits for space. Default 30 s. */
  appendDeadlineMs?: number
  /** Default 'append'. */
  durability?: Durability
  /**
   * How a new segment file is made. 'zeros' (default) writes its zeros and syncs them: the space is
   * reserved, so a full disk fails appends cleanly with SF_DISK_FULL while the slot carries on
   * (invariant 7). 'sparse' only sets its size: no write or sync of a segment's worth of zeros per new
   * segment, but a full disk then fails an append's write (SF_DISK_FULL too) and stops the slot, as any
   * failed write does. Reused segment files are allocated already either way.
   */
  preallocate?: Preallocate
  /** fdatasync period in 'periodic' mode. Default 1000 ms. */
  syncIntervalMs?: number
  logger?: SlotLogger
  /** Lock heartbeat period. Default 1000 ms. */
  lockHeartbeatMs?: number
  /** Heartbeat silence after which another host may take the lock over. Default 10 000 ms. */
  lockStaleMs?: number
  /** Extra words for appendBlocking's timeout message. */
  describeStall?: () => string
  /** File system access; tests inject faults here. */
  io?: SlotFs
}

interface Settings {
  dir: string
  durability: Durability
  segmentBytes: number
  maxTotalBytes: number
  maxSegments: number
  preallocate: Preallocate
  syncIntervalMs: number
  io: SlotFs
  logger: SlotLogger
}

export async function openSlot(options: SlotOptions): Promise<Slot> {
  const s = settings(options)
  await s.io.mkdir(s.dir)
  let slot: DiskSlot | undefined
  const lock = await SlotLock.acquire(
    s.dir,
    { heartbeatMs: options.lockHeartbeatMs ?? 1000, staleMs: options.lockStaleMs ?? 10_000 },
    (e) => slot?.fail(e),
    s.io.lockFiles,
  )
  try {
    const recovered = await recoverSlot(s.io, s.dir, s.logger)
    for (const name of recovered.leftovers) await s.io.unlink(path.join(s.dir, name))
    const slotId = await loadSlotId(s.io, s.dir)
    const active = await openAppendable(s, recovered)
    slot = new DiskSlot(s, options, lock, slotId, recovered, active)
    return slot
  } catch (e) {
    await lock.release()
    throw e
  }
}

function settings(o: SlotOptions): Settings {
  const senderId = o.senderId ?? 'default'
  if (!/^[A-Za-z0-9._-]+$/.test(senderId) || senderId === '.' || senderId === '..') {
    throw new SlotOptionError(
      'senderId',
      `"${senderId}" must be a plain directory name (letters, digits, . _ -)`,
    )
  }
  const segmentBytes = o.maxSegmentBytes ?? 4 * MiB
  if (!Number.isInteger(segmentBytes) || segmentBytes < 256 || segmentBytes > 1024 * MiB) {
    throw new SlotOptionError('maxSegmentBytes', `${segmentBytes} must be an integer from 256 to 1 GiB`)
  }
  const maxTotalBytes = o.maxTotalBytes ?? 10 * 1024 * MiB
  if (!(maxTotalBytes >= 2 * segmentBytes)) {
    throw new SlotOptionError('maxTotalBytes', `${maxTotalBytes} must be at least 2 × maxSegmentBytes`)
  }
  const durability = o.durability ?? 'append'
  if (!['append', 'periodic', 'memory'].includes(durability)) {
    throw new SlotOptionError('durability', `"${durability}" must be append, periodic or memory`)
  }
  const preallocate = o.preallocate ?? 'zeros'
  if (!['zeros', 'sparse'].includes(preallocate)) {
    throw new SlotOptionError('preallocate', `"${preallocate}" must be zeros or sparse`)
  }
  return {
    dir: path.resolve(o.sfDir, senderId),
    durability,
    segmentBytes,
    maxTotalBytes,
    maxSegments: Math.floor(maxTotalBytes / segmentBytes),
    preallocate,
    syncIntervalMs: o.syncIntervalMs ?? 1000,
    io: o.io ?? nodeFs,
    logger: o.logger ?? defaultLogger,
  }
}

/** Opens the last segment for appending after zeroing its torn tail, if recovery allows appending to it. */
async function openAppendable(s: Settings, r: Recovered): Promise<ActiveSegment | undefined> {
  if (!r.appendable) return undefined
  const { segment, tornEnd } = r.appendable
  const file = await s.io.open(path.join(s.dir, segment.name), 'r+')
  if (tornEnd > segment.end) {
    const zeros = Buffer.alloc(tornEnd - segment.end)
    await writeFully(file, zeros, 0, zeros.length, segment.end)
    await file.datasync()
  }
  segment.staleEnd = 0 // tornEnd is past its last non-zero byte
  return { seg: segment, file, dirty: false }
}

class DiskSlot extends BaseSlot {
  private readonly writer: SegmentWriter
  private published: bigint
  private acked: bigint
  private persistedAck: bigint
  private ackChain: Promise<void> = Promise.resolve()
  private readonly syncTimer: NodeJS.Timeout | undefined
  private broken: Error | undefined
  private closing: Promise<void> | undefined
  private acksClosed = false
  private appends = 0
  private readonly tornTailBytes: number
  private readonly dataLoss: DataLossRange[]

  constructor(
    private readonly s: Settings,
    options: SlotOptions,
    private readonly lock: SlotLock,
    readonly slotId: string,
    r: Recovered,
    active: ActiveSegment | undefined,
  ) {
    super({
      appendDeadlineMs: options.appendDeadlineMs ?? 30_000,
      describeStall: options.describeStall,
      logger: s.logger,
    })
    this.published = r.publishedFsn
    this.acked = this.persistedAck = r.ackedFsn
    this.tornTailBytes = r.tornTailBytes
    this.dataLoss = r.dataLoss
    this.writer = new SegmentWriter(s, r.segments, active, r.nextGen, r.nextFsn, {
      beforeWrite: () => this.lock.writable(),
      published: (last, frames) => {
        this.published = last
        this.appends += frames
        this.emitPublished(last)
      },
      failed: (e) => this.fail(e),
      rotated: () => this.queueTrim(),
    })
    this.queueTrim()
    if (s.durability === 'periodic') {
      this.syncTimer = setInterval(() => this.writer.requestSync(), s.syncIntervalMs)
      this.syncTimer.unref()
    }
  }

  get publishedFsn(): bigint {
    return this.published
  }

  get ackedFsn(): bigint {
    return this.acked
  }

  private get segments(): Segment[] {
    return this.writer.segments
  }

  stats(): SlotStats {
    return {
      durability: this.s.durability,
      segments: this.segments.length,
      totalBytes: this.writer.diskBytes,
      maxTotalBytes: this.s.maxTotalBytes,
      publishedFsn: this.published,
      ackedFsn: this.acked,
      appends: this.appends,
      syncs: this.writer.syncs,
      backpressureStalls: this.backpressureStalls,
      tornTailBytes: this.tornTailBytes,
      dataLoss: [...this.dataLoss],
    }
  }

  /** Stops the slot: every queued and future call fails with `error` as the cause. */
  fail(error: Error): void {
    if (this.broken) return
    this.broken = error
    this.s.logger.error(`slot ${this.s.dir} stopped: ${error.message}`)
    this.writer.stop(error)
    this.wakeAppenders()
  }

  protected tryAppend(payload: Payload): Promise<bigint> | typeof FULL {
    if (this.closing) throw new SlotClosedError(this.s.dir, 'it was closed')
    if (this.broken) {
      throw new SlotClosedError(this.s.dir, `it stopped after: ${this.broken.message}`, {
        cause: this.broken,
      })
    }
    return this.writer.enqueue(payload)
  }

  protected describeFull(): string {
    return (
      `${this.segments.length} segments of ${this.s.segmentBytes} bytes reach maxTotalBytes ${this.s.maxTotalBytes} ` +
      `with ${this.published - this.acked} unacked frames (ackedFsn ${this.acked}, publishedFsn ${this.published})`
    )
  }

  // ---- ack and trim ----

  ack(fsn: bigint): Promise<void> {
    if (this.acksClosed) return Promise.reject(new SlotClosedError(this.s.dir, 'it was closed'))
    if (fsn > this.published) return Promise.reject(new AckOutOfRangeError(fsn, this.published))
    if (fsn > this.acked) {
      this.acked = fsn
      this.emitAcked(fsn)
    }
    return this.queueAckWork(() => this.persistAck())
  }

  private queueAckWork(work: () => Promise<void>): Promise<void> {
    const link = this.ackChain.then(work)
    this.ackChain = link.catch(() => {})
    return link
  }

  private queueTrim(): void {
    void this.queueAckWork(() => this.trim()).catch((e) =>
      this.s.logger.error(`trimming ${this.s.dir}: ${e.message}`),
    )
  }

  /** Writes the watermark if it is behind (acks arriving meanwhile share one write), then trims. */
  private async persistAck(): Promise<void> {
    const target = this.acked
    if (target > this.persistedAck) {
      await this.lock.writable()
      try {
        await writeWatermark(this.s.io, this.s.dir, target)
      } catch (e) {
        if (errorCode(e) !== 'ENOSPC') throw ioError(this.s.dir, 'writing .ack-watermark', e)
        // The spare segment is the slot's own reserve: give it back so the watermark, and then the trim
        // that frees real space, can proceed.
        await this.writer.discardSpare()
        await writeWatermark(this.s.io, this.s.dir, target).catch((e2) => {
          throw ioError(this.s.dir, 'writing .ack-watermark', e2)
        })
      }
      this.persistedAck = target
    }
    await this.trim()
  }

  /**
   * Removes sealed segments whose frames are all at or below the durable watermark (invariant 4); the
   * writer keeps some of their files for reuse as spares.
   */
  private async trim(): Promise<void> {
    let freed = false
    for (
      let seg = this.writer.trimmable(this.persistedAck);
      seg;
      seg = this.writer.trimmable(this.persistedAck)
    ) {
      await this.lock.writable()
      await this.writer.trimOldest()
      freed = true
    }
    if (freed) this.wakeAppenders()
  }

  seal(): Promise<void> {
    if (this.closing) return Promise.reject(new SlotClosedError(this.s.dir, 'it was closed'))
    return this.writer.sealActive()
  }

  // ---- replay ----

  async *replay(fromFsn?: bigint): AsyncGenerator<SlotFrame> {
    let next = fromFsn ?? 0n
    for (;;) {
      if (this.closing) throw new SlotClosedError(this.s.dir, 'it was closed')
      if (next <= this.acked) next = this.acked + 1n
      if (next > this.published) return
      const seg = this.segments.find((x) => x.count > 0 && lastFsn(x) >= next)
      if (!seg) return
      if (seg.baseSeq > next) next = seg.baseSeq
      let file: SlotFile
      try {
        file = await this.s.io.open(this.path(seg.name), 'r')
      } catch (e) {
        if (errorCode(e) === 'ENOENT') continue // trimmed meanwhile: the acked check above moves past it
        throw e
      }
      try {
        for await (const frame of this.framesOf(seg, file, next)) {
          yield frame
          next = frame.fsn + 1n
        }
      } finally {
        await file.close()
      }
    }
  }

  /** Published frames of one segment from FSN `from`, verifying every checksum again. */
  private async *framesOf(seg: Segment, file: SlotFile, from: bigint): AsyncGenerator<SlotFrame> {
    let [index, offset] = seek(seg, Number(from - seg.baseSeq))
    const reader = new FrameReader(
      file,
      seg.salt,
      offset,
      seg.end,
      Math.min(MiB, Math.max(64 * 1024, seg.end - offset)),
    )
    while (index < seg.count) {
      reader.limit = seg.end
      const at = reader.pos
      let n = reader.nextFrame()
      if (typeof n !== 'number') {
        n = await n
        // Trimmed during the read: its file may hold a new segment already, whose frames fail this
        // segment's checks without being damage.
        if (!this.segments.includes(seg)) return
      }
      if (n < 0) {
        this.loseFrames(seg, index, at)
        return
      }
      noteFrame(seg, index, at)
      const fsn = seg.baseSeq + BigInt(index++)
      if (fsn >= from) yield { fsn, payload: reader.keepPayload(n) }
    }
  }

  /**
   * Frame `index` of `seg`, at `offset`, failed its check. In a sealed segment (recovery trusted its seal,
   * invariant 8) that is damage: the frames from there to the segment's end are reported lost, as
   * recovery would, and the segment ends there so replay continues with the next one. In the active
   * segment, whose frames recovery or this writer checked, the disk damaged data while the slot ran.
   */
  private loseFrames(seg: Segment, index: number, offset: number): void {
    const fromFsn = seg.baseSeq + BigInt(index)
    if (seg === this.writer.activeSegment) throw new CorruptFrameError(seg.name, fromFsn)
    const range = { fromFsn, toFsn: lastFsn(seg), exact: true, segment: seg.name, reason: 'damaged frame' }
    seg.count = seg.writtenCount = index
    seg.end = seg.writtenEnd = offset
    const reported = reportDataLoss(this.s.dir, range, this.acked, this.s.logger)
    if (reported) this.dataLoss.push(reported)
  }

  // ---- lifecycle ----

  async markFailed(reason: string): Promise<void> {
    await this.lock.writable()
    await replaceFileDurably(this.s.io, this.s.dir, FAILED_FILE, Buffer.from(reason, 'utf8'))
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown()
    return this.closing
  }

  private async shutDown(): Promise<void> {
    this.wakeAppenders()
    clearInterval(this.syncTimer)
    await this.writer.drain()
    this.acksClosed = true
    await this.ackChain
    try {
      if (!this.broken) {
        await this.writer.syncIfDirty()
        if (this.acked >= this.published) await this.removeDrained()
      }
    } finally {
      await this.writer.close()
      await this.lock.release()
    }
  }

  /** Everything is acked: keep only the watermark (for FSN continuity), so the slot reopens as fresh. */
  private async removeDrained(): Promise<void> {
    await this.lock.writable()
    const last = this.writer.lastUsedFsn
    if (last > this.persistedAck) await writeWatermark(this.s.io, this.s.dir, last)
    this.persistedAck = last
    await Promise.all(this.segments.splice(0).map((seg) => this.s.io.unlink(this.path(seg.name))))
    await this.s.io.syncDir(this.s.dir)
  }

  private path(name: string): string {
    return path.join(this.s.dir, name)
  }
}
