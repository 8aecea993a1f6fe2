/**
 * The durable slot: `<sfDir>/<senderId>/`.
 *
 *   .lock, .lock.pid     compatibility files for other clients, never deleted (lock.ts)
 *   .lock.owner/         the lock: owner.json (host, PID, instance, heartbeat) (lock.ts)
 *   .failed              optional: UTF-8 reason a drainer gave up; orphan scans skip the slot
 *   .ack-watermark       optional: 16-byte cumulative acked FSN (watermark.ts, format.ts)
 *   sf-<16 hex gen>.sfa  segments: 32-byte header + frames [crc32c][length][payload], then zeros up to
 *                        the preallocated file size (format.ts, segment.ts)
 *   sf-<gen>.sfa.tmp     the spare: the next segment, zero-filled ahead of the writer; deleted on recovery
 *
 * Invariants:
 *  1. FSNs are consecutive within a segment (FSN = baseSeq + index) and segments continue one another,
 *     except across a range recovery reported as data loss. FSNs never go backwards while the directory
 *     exists: after a full drain the watermark keeps the last one.
 *  2. publishedFsn only covers frames on disk: fdatasync'd in 'append' mode, written in the others. A
 *     reader never sees, and an ack never names, a frame that a crash could take back in 'append' mode.
 *  3. Frames reach a new segment only after the previous one is fdatasync'd, and a segment gets its final
 *     name only after its header is durable, so a crash leaves at most a torn tail in the last segment.
 *  4. A segment is deleted only when all its frames are at or below the durable watermark.
 *  5. Segment files (+ the spare) never exceed maxTotalBytes: appends are planned against that budget when
 *     they are queued, in the order the writer lays them out.
 *  6. One writer per file: all segment writes go through one flush loop; appends queued while a write or
 *     fdatasync runs share the next one (group commit).
 *  7. After a failed write or fdatasync the slot stops (fail-stop): the page cache can no longer be trusted
 *     to match the disk, so only reopening (recovery) may continue. Disk full while creating a segment is
 *     the exception: nothing was written, the appends fail with SF_DISK_FULL and the slot carries on.
 */
import path from 'node:path'
import { BaseSlot, type Durability, FULL, type Slot, type SlotFrame, type SlotStats } from './base-slot.js'
import {
  AckOutOfRangeError,
  CorruptFrameError,
  DiskFullError,
  FrameTooLargeError,
  SlotClosedError,
  SlotIoError,
  SlotOptionError,
} from './errors.js'
import {
  encodeFrameInto,
  encodeSegmentHeader,
  FRAME_HEADER_BYTES,
  SEGMENT_HEADER_BYTES,
  segmentFileName,
} from './format.js'
import { errorCode, nodeFs, replaceFileDurably, type SlotFile, type SlotFs, writeFully } from './io.js'
import { SlotLock } from './lock.js'
import { defaultLogger, type SlotLogger } from './logger.js'
import { type DataLossRange, type Recovered, recoverSlot } from './recovery.js'
import {
  createZeroFilledFile,
  FrameReader,
  lastFsn,
  newSegment,
  noteFrame,
  type Segment,
  seek,
} from './segment.js'
import { writeWatermark } from './watermark.js'

export type { Durability, Slot, SlotFrame, SlotStats } from './base-slot.js'

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
  syncIntervalMs: number
  io: SlotFs
  logger: SlotLogger
}

interface Waiter {
  resolve(fsn: bigint): void
  reject(error: unknown): void
}

/** Frames queued for one write, encoded back to back. */
class Batch {
  private static readonly INITIAL_BYTES = 256 * 1024
  private static readonly KEEP_BYTES = 8 * MiB
  buf = Buffer.allocUnsafe(Batch.INITIAL_BYTES)
  length = 0
  sizes: number[] = []
  waiters: Waiter[] = []

  add(payload: Uint8Array, waiter: Waiter): void {
    const size = FRAME_HEADER_BYTES + payload.length
    if (this.length + size > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + size))
      this.buf.copy(bigger, 0, 0, this.length)
      this.buf = bigger
    }
    this.length = encodeFrameInto(this.buf, this.length, payload)
    this.sizes.push(size)
    this.waiters.push(waiter)
  }

  reset(): void {
    this.length = 0
    this.sizes = []
    this.waiters = []
    if (this.buf.length > Batch.KEEP_BYTES) this.buf = Buffer.allocUnsafe(Batch.INITIAL_BYTES)
  }
}

interface Active {
  seg: Segment
  file: SlotFile
  /** Written since the last fdatasync. */
  dirty: boolean
  /** Still named `<name>.tmp`: renamed once its header and first frames are durable. */
  tmp: boolean
}

interface Spare {
  gen: bigint
  file: SlotFile
}

/** A failure after which earlier-written frames of the batch stay valid and the slot carries on. */
class RotationDiskFull extends Error {}

export async function openSlot(options: SlotOptions): Promise<Slot> {
  const s = settings(options)
  await s.io.mkdir(s.dir)
  let slot: DiskSlot | undefined
  const lock = await SlotLock.acquire(
    s.dir,
    { heartbeatMs: options.lockHeartbeatMs ?? 1000, staleMs: options.lockStaleMs ?? 10_000 },
    (e) => slot?.fail(e),
  )
  try {
    const recovered = await recoverSlot(s.io, s.dir, s.logger)
    for (const name of recovered.leftovers) await s.io.unlink(path.join(s.dir, name))
    const active = await openAppendable(s, recovered)
    slot = new DiskSlot(s, options, lock, recovered, active)
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
  return {
    dir: path.resolve(o.sfDir, senderId),
    durability,
    segmentBytes,
    maxTotalBytes,
    maxSegments: Math.floor(maxTotalBytes / segmentBytes),
    syncIntervalMs: o.syncIntervalMs ?? 1000,
    io: o.io ?? nodeFs,
    logger: o.logger ?? defaultLogger,
  }
}

/** Opens the last segment for appending after zeroing its torn tail, if recovery allows appending to it. */
async function openAppendable(s: Settings, r: Recovered): Promise<Active | undefined> {
  if (!r.appendable) return undefined
  const { segment, tornEnd } = r.appendable
  const file = await s.io.open(path.join(s.dir, segment.name), 'r+')
  if (tornEnd > segment.end) {
    const zeros = Buffer.alloc(tornEnd - segment.end)
    await writeFully(file, zeros, 0, zeros.length, segment.end)
    await file.datasync()
  }
  return { seg: segment, file, dirty: false, tmp: false }
}

class DiskSlot extends BaseSlot {
  private readonly segments: Segment[]
  private active: Active | undefined
  private spare: Promise<Spare | Error> | undefined
  private spareReady = false
  private nextGen: bigint
  /** FSN the next written frame gets. */
  private nextFsn: bigint
  private published: bigint
  private acked: bigint
  private persistedAck: bigint
  /** Segment budget as seen by queued appends: segment count and free bytes in the last one. */
  private plan = { segments: 0, free: 0 }
  private fill = new Batch()
  private idle = new Batch()
  private flushing = false
  private flushed: Promise<void> = Promise.resolve()
  private syncWanted = false
  private ackChain: Promise<void> = Promise.resolve()
  private readonly syncTimer: NodeJS.Timeout | undefined
  private broken: Error | undefined
  private closing: Promise<void> | undefined
  private acksClosed = false
  private appends = 0
  private syncs = 0
  private readonly tornTailBytes: number
  private readonly dataLoss: DataLossRange[]

  constructor(
    private readonly s: Settings,
    options: SlotOptions,
    private readonly lock: SlotLock,
    r: Recovered,
    active: Active | undefined,
  ) {
    super({
      appendDeadlineMs: options.appendDeadlineMs ?? 30_000,
      describeStall: options.describeStall,
      logger: s.logger,
    })
    this.segments = r.segments
    this.active = active
    this.nextGen = r.nextGen
    this.nextFsn = r.nextFsn
    this.published = r.publishedFsn
    this.acked = this.persistedAck = r.ackedFsn
    this.tornTailBytes = r.tornTailBytes
    this.dataLoss = r.dataLoss
    this.resetPlan()
    this.prepareSpare()
    this.queueTrim()
    if (s.durability === 'periodic') {
      this.syncTimer = setInterval(() => {
        this.syncWanted = true
        this.kick()
      }, s.syncIntervalMs)
      this.syncTimer.unref()
    }
  }

  get publishedFsn(): bigint {
    return this.published
  }

  get ackedFsn(): bigint {
    return this.acked
  }

  stats(): SlotStats {
    return {
      durability: this.s.durability,
      segments: this.segments.length,
      totalBytes:
        this.segments.reduce((sum, seg) => sum + seg.fileBytes, 0) +
        (this.spareReady ? this.s.segmentBytes : 0),
      maxTotalBytes: this.s.maxTotalBytes,
      publishedFsn: this.published,
      ackedFsn: this.acked,
      appends: this.appends,
      syncs: this.syncs,
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
    this.rejectFrom(this.fill, error)
    this.fill.reset()
    this.wakeAppenders()
  }

  // ---- append ----

  protected tryAppend(payload: Uint8Array): Promise<bigint> | typeof FULL {
    this.assertUsable()
    const size = FRAME_HEADER_BYTES + payload.length
    const maxPayload = this.s.segmentBytes - SEGMENT_HEADER_BYTES - FRAME_HEADER_BYTES
    if (payload.length > maxPayload) throw new FrameTooLargeError(payload.length, maxPayload)
    if (!this.reserve(size)) return FULL
    return new Promise<bigint>((resolve, reject) => {
      this.fill.add(payload, { resolve, reject })
      if (this.fill.waiters.length === 1) queueMicrotask(() => this.kick())
    })
  }

  protected describeFull(): string {
    const unacked = this.published - this.acked
    return (
      `${this.segments.length} segments of ${this.s.segmentBytes} bytes reach maxTotalBytes ` +
      `${this.s.maxTotalBytes} with ${unacked} unacked frames (ackedFsn ${this.acked}, publishedFsn ${this.published})`
    )
  }

  /** Plans the frame into the segment budget (invariant 5); false when it would exceed it. */
  private reserve(size: number): boolean {
    if (this.plan.free >= size) {
      this.plan.free -= size
      return true
    }
    if (this.plan.segments + 1 > this.s.maxSegments) return false
    this.plan.segments++
    this.plan.free = this.s.segmentBytes - SEGMENT_HEADER_BYTES - size
    return true
  }

  private resetPlan(): void {
    const a = this.active
    this.plan = { segments: this.segments.length, free: a ? a.seg.fileBytes - a.seg.writtenEnd : 0 }
  }

  private assertUsable(): void {
    if (this.closing) throw new SlotClosedError(this.s.dir, 'it was closed')
    if (this.broken)
      throw new SlotClosedError(this.s.dir, `it stopped after: ${this.broken.message}`, {
        cause: this.broken,
      })
  }

  private kick(): void {
    if (this.flushing || this.broken) return
    this.flushing = true
    this.flushed = this.flushLoop()
  }

  /** The single writer (invariant 6): one batch at a time; appends queued meanwhile form the next one. */
  private async flushLoop(): Promise<void> {
    try {
      while (!this.broken) {
        if (this.fill.waiters.length > 0) {
          const batch = this.fill
          this.fill = this.idle
          try {
            this.lock.check()
            await this.writeBatch(batch)
          } catch (e) {
            this.rejectFrom(batch, e)
            this.fail(e as Error)
          } finally {
            batch.reset()
            this.idle = batch
          }
        } else if (this.syncWanted) {
          this.syncWanted = false
          if (this.active?.dirty)
            await this.syncActive(this.active).catch((e) => this.fail(ioError(this.s.dir, 'syncing', e)))
        } else return
      }
    } finally {
      this.flushing = false
    }
  }

  /**
   * Writes the batch across as many segments as it needs, syncs as the durability mode requires, then
   * publishes it. A disk-full rotation publishes the frames already sealed and rejects the rest.
   */
  private async writeBatch(batch: Batch): Promise<void> {
    const firstFsn = this.nextFsn
    const n = batch.sizes.length
    let i = 0
    let offset = 0
    try {
      while (i < n) {
        if (!this.active || this.active.seg.fileBytes - this.active.seg.writtenEnd < batch.sizes[i]!) {
          await this.rotate(firstFsn + BigInt(i))
        }
        const a = this.active!
        let j = i
        let bytes = 0
        while (j < n && bytes + batch.sizes[j]! <= a.seg.fileBytes - a.seg.writtenEnd)
          bytes += batch.sizes[j++]!
        await this.write(a, batch.buf, offset, bytes)
        for (let k = i, at = a.seg.writtenEnd; k < j; at += batch.sizes[k++]!)
          noteFrame(a.seg, a.seg.writtenCount++, at)
        a.seg.writtenEnd += bytes
        offset += bytes
        i = j
      }
      if (this.s.durability === 'append' || this.active!.tmp) await this.syncActive(this.active!)
      this.publish(batch, firstFsn, n)
    } catch (e) {
      if (!(e instanceof RotationDiskFull)) throw ioError(this.s.dir, 'appending', e)
      this.publish(batch, firstFsn, i)
      const error = e.cause as Error
      this.rejectFrom(batch, error, i)
      this.rejectFrom(this.fill, error)
      this.fill.reset()
      this.resetPlan()
    }
  }

  private async write(a: Active, buf: Buffer, offset: number, bytes: number): Promise<void> {
    a.dirty = true
    await writeFully(a.file, buf, offset, bytes, a.seg.writtenEnd)
  }

  private publish(batch: Batch, firstFsn: bigint, frames: number): void {
    if (frames === 0) return
    for (let k = this.segments.length - 1; k >= 0; k--) {
      const seg = this.segments[k]!
      if (seg.count === seg.writtenCount) break
      seg.count = seg.writtenCount
      seg.end = seg.writtenEnd
    }
    this.nextFsn = firstFsn + BigInt(frames)
    this.published = this.nextFsn - 1n
    this.appends += frames
    for (let k = 0; k < frames; k++) batch.waiters[k]!.resolve(firstFsn + BigInt(k))
    this.emitPublished(this.published)
  }

  private rejectFrom(batch: Batch, error: unknown, from = 0): void {
    for (let k = from; k < batch.waiters.length; k++) batch.waiters[k]!.reject(error)
  }

  private async syncActive(a: Active): Promise<void> {
    if (a.dirty) {
      a.dirty = false
      await a.file.datasync()
      this.syncs++
    }
    if (a.tmp) {
      await this.s.io.rename(this.path(`${a.seg.name}.tmp`), this.path(a.seg.name))
      await this.s.io.syncDir(this.s.dir)
      a.tmp = false
    }
  }

  /** Seals the active segment (invariant 3) and starts the next one with its first frame at `baseSeq`. */
  private async rotate(baseSeq: bigint): Promise<void> {
    const old = this.active
    if (old) await this.syncActive(old)
    const spare = await this.takeSpare()
    const seg = newSegment(spare.gen, baseSeq, this.s.segmentBytes)
    this.active = { seg, file: spare.file, dirty: true, tmp: true }
    this.segments.push(seg)
    await writeFully(spare.file, encodeSegmentHeader(baseSeq, Date.now()), 0, SEGMENT_HEADER_BYTES, 0)
    if (old) await old.file.close()
    this.prepareSpare()
    this.queueTrim()
  }

  /** Zero-fills the next segment in the background while there is room for it (invariant 5). */
  private prepareSpare(): void {
    if (this.spare || this.closing || this.broken || this.segments.length + 1 > this.s.maxSegments) return
    const gen = this.nextGen++
    this.spare = createZeroFilledFile(
      this.s.io,
      this.path(`${segmentFileName(gen)}.tmp`),
      this.s.segmentBytes,
    ).then(
      (file) => {
        this.spareReady = true
        return { gen, file }
      },
      (e: Error) => e,
    )
  }

  private async takeSpare(): Promise<Spare> {
    const ready = this.spare ? await this.spare : undefined
    this.spare = undefined
    this.spareReady = false
    if (ready && !(ready instanceof Error)) return ready
    const gen = this.nextGen++
    try {
      return {
        gen,
        file: await createZeroFilledFile(
          this.s.io,
          this.path(`${segmentFileName(gen)}.tmp`),
          this.s.segmentBytes,
        ),
      }
    } catch (e) {
      if (errorCode(e) === 'ENOSPC')
        throw new RotationDiskFull('', { cause: new DiskFullError(this.s.dir, 'creating a segment', e) })
      throw e
    }
  }

  private async discardSpare(): Promise<void> {
    const spare = this.spare ? await this.spare : undefined
    this.spare = undefined
    this.spareReady = false
    if (!spare || spare instanceof Error) return
    await spare.file.close()
    await this.s.io.unlink(this.path(`${segmentFileName(spare.gen)}.tmp`))
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

  /** Writes the watermark if it is behind (many acks share one write), then trims. */
  private async persistAck(): Promise<void> {
    const target = this.acked
    if (target > this.persistedAck) {
      this.lock.check()
      try {
        await writeWatermark(this.s.io, this.s.dir, target)
      } catch (e) {
        if (errorCode(e) !== 'ENOSPC') throw ioError(this.s.dir, 'writing .ack-watermark', e)
        // The spare segment is the slot's own reserve: give it back so the watermark, and then the trim
        // that frees real space, can proceed.
        await this.discardSpare()
        await writeWatermark(this.s.io, this.s.dir, target).catch((e2) => {
          throw ioError(this.s.dir, 'writing .ack-watermark', e2)
        })
      }
      this.persistedAck = target
    }
    await this.trim()
  }

  /** Deletes sealed segments whose frames are all at or below the durable watermark (invariant 4). */
  private async trim(): Promise<void> {
    let freed = false
    while (this.segments.length > 0) {
      const seg = this.segments[0]!
      // writtenCount, not count: a sealed segment's frames may still await publication by the writer.
      if (seg === this.active?.seg || seg.baseSeq + BigInt(seg.writtenCount) - 1n > this.persistedAck) break
      await this.s.io.unlink(this.path(seg.name))
      this.segments.shift()
      this.plan.segments--
      freed = true
    }
    if (freed) {
      this.prepareSpare()
      this.wakeAppenders()
    }
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
      offset,
      seg.end,
      Math.min(MiB, Math.max(64 * 1024, seg.end - offset)),
    )
    while (index < seg.count) {
      reader.limit = seg.end
      let n = reader.nextFrame()
      if (typeof n !== 'number') n = await n
      const fsn = seg.baseSeq + BigInt(index++)
      if (n < 0) throw new CorruptFrameError(seg.name, fsn)
      if (fsn >= from)
        yield { fsn, payload: Buffer.from(reader.buffer.subarray(reader.payloadAt, reader.payloadAt + n)) }
    }
  }

  // ---- lifecycle ----

  async markFailed(reason: string): Promise<void> {
    await replaceFileDurably(this.s.io, this.s.dir, FAILED_FILE, Buffer.from(reason, 'utf8'))
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown()
    return this.closing
  }

  private async shutDown(): Promise<void> {
    this.wakeAppenders()
    clearInterval(this.syncTimer)
    if (this.fill.waiters.length > 0) this.kick()
    while (this.flushing) await this.flushed
    this.acksClosed = true
    await this.ackChain
    try {
      if (!this.broken) {
        if (this.active?.dirty) await this.syncActive(this.active)
        if (this.acked >= this.published) await this.removeDrained()
      }
    } finally {
      await this.active?.file.close()
      this.active = undefined
      await this.discardSpare().catch(() => {})
      await this.lock.release()
    }
  }

  /** Everything is acked: keep only the watermark (for FSN continuity), so the slot reopens as fresh. */
  private async removeDrained(): Promise<void> {
    const last = this.nextFsn - 1n
    if (last > this.persistedAck) await writeWatermark(this.s.io, this.s.dir, last)
    this.persistedAck = last
    for (const seg of this.segments.splice(0)) await this.s.io.unlink(this.path(seg.name))
    await this.s.io.syncDir(this.s.dir)
  }

  private path(name: string): string {
    return path.join(this.s.dir, name)
  }
}

function ioError(dir: string, during: string, e: unknown): Error {
  if (errorCode(e) === 'ENOSPC') return new DiskFullError(dir, during, e)
  if (
    typeof (e as { code?: unknown })?.code === 'string' &&
    String((e as { code: string }).code).startsWith('SF_')
  ) {
    return e as Error
  }
  return new SlotIoError(dir, during, e)
}
