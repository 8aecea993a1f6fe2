/**
 * The slot's single writer: group commit, rotation with sealing, and the preallocated spare segment.
 * Appends are planned against the segment budget when they are queued, laid out in a group commit
 * (group-commit.ts), and written by one flush loop, one vectored write per segment; appends queued while
 * a write or fdatasync runs form the next group commit and share its sync.
 *
 * Trimmed segments are retired (renamed `.tmp`, up to MAX_RETIRED) rather than deleted, and the next spare
 * is made from a retired file when there is one: overwriting blocks that are already allocated syncs far
 * faster than allocating new ones, and only its header needs zeroing, since its old frames cannot pass for
 * new ones (format.ts). Whether an acked segment is at hand does not then depend on whether the acks
 * arrived before or after the rotation that needed it. Frame CRCs are set when the writer knows the
 * segment a frame lands in.
 */
import path from 'node:path'
import type { Durability, Payload, Preallocate } from './base-slot.js'
import { FULL, payloadLength } from './base-slot.js'
import { DiskFullError, FrameTooLargeError, SlotIoError } from './errors.js'
import {
  encodeSeal,
  encodeSegmentHeader,
  FRAME_HEADER_BYTES,
  SEAL_BYTES,
  SEGMENT_HEADER_BYTES,
  segmentFileName,
} from './format.js'
import { GroupCommit, type Waiter } from './group-commit.js'
import { errorCode, type SlotFile, type SlotFs, writeFully, writevFully } from './io.js'
import {
  blankSegmentFile,
  createSegmentFile,
  dirtyExtent,
  newSegment,
  noteFrame,
  type Segment,
} from './segment.js'

/** Retired segment files kept for reuse; trimming deletes any beyond this. */
const MAX_RETIRED = 8

export interface WriterSettings {
  dir: string
  durability: Durability
  segmentBytes: number
  maxSegments: number
  preallocate: Preallocate
  io: SlotFs
}

export interface WriterHooks {
  /**
   * The lock's fence, asked before the flush loop writes (a batch, a seal, a sync) and before a spare is
   * made or deleted: undefined to go on at once, a promise to wait for first (a late heartbeat being
   * verified); its rejection stops the writer.
   */
  beforeWrite(): Promise<void> | undefined
  /** Frames up to `lastFsn` are published. */
  published(lastFsn: bigint, frames: number): void
  /** The writer stopped for good (failed write or sync). */
  failed(error: Error): void
  /** A segment was sealed: the slot may trim. */
  rotated(): void
}

export interface ActiveSegment {
  seg: Segment
  file: SlotFile
  /** Written since the last fdatasync. */
  dirty: boolean
}

interface Spare {
  gen: bigint
  file: SlotFile
  /** Where the file's previous use may have left bytes (0: fresh). */
  staleEnd: number
}

interface Retired {
  name: string
  staleEnd: number
}

/** A failure after which earlier-written frames of the batch stay valid and the writer carries on. */
class RotationDiskFull extends Error {}

export class SegmentWriter {
  syncs = 0
  private spare: Promise<Spare | Error> | undefined
  private spareReady = false
  /**
   * Trimmed segment files renamed `<name>.tmp`, waiting to become spares (recovery deletes them), with
   * the extent that may hold non-zero bytes besides the seal.
   */
  private readonly retired: Retired[] = []
  /** Segment budget as seen by queued appends: segment count and free bytes in the last one. */
  private plan = { segments: 0, free: 0 }
  private fill = new GroupCommit()
  private idle = new GroupCommit()
  private flushing = false
  private flushed: Promise<void> = Promise.resolve()
  private syncWanted = false
  /** Callers of sealActive waiting for the flush loop to seal the active segment. */
  private sealWaiters: Waiter[] = []
  private stopped: Error | undefined

  constructor(
    private readonly s: WriterSettings,
    /** Live segments ordered by baseSeq; the last one may be the active one. Shared with the slot. */
    readonly segments: Segment[],
    private active: ActiveSegment | undefined,
    private nextGen: bigint,
    /** FSN the next written frame gets. */
    private nextFsn: bigint,
    private readonly hooks: WriterHooks,
  ) {
    this.resetPlan()
    this.prepareSpare()
  }

  get activeSegment(): Segment | undefined {
    return this.active?.seg
  }

  /** Highest FSN handed out or skipped so far (FSNs continue after it). */
  get lastUsedFsn(): bigint {
    return this.nextFsn - 1n
  }

  /** Disk bytes of the segment files, the spare and retired files. */
  get diskBytes(): number {
    const spares = this.retired.length + (this.spareReady ? 1 : 0)
    return this.segments.reduce((sum, seg) => sum + seg.fileBytes, 0) + spares * this.s.segmentBytes
  }

  /** Queues a frame; FULL when it does not fit the segment budget. */
  enqueue(payload: Payload): Promise<bigint> | typeof FULL {
    const length = payloadLength(payload)
    const maxPayload = this.s.segmentBytes - SEGMENT_HEADER_BYTES - FRAME_HEADER_BYTES
    if (length > maxPayload) throw new FrameTooLargeError(length, maxPayload)
    if (!this.reserve(FRAME_HEADER_BYTES + length)) return FULL
    return new Promise<bigint>((resolve, reject) => {
      this.fill.add(payload, length, { resolve, reject })
      // Appends made in the same tick join one batch.
      if (this.fill.waiters.length === 1) queueMicrotask(() => this.kick())
    })
  }

  /** Asks for an fdatasync of written data ('periodic' mode). */
  requestSync(): void {
    this.syncWanted = true
    this.kick()
  }

  /** Seals the active segment once the appends queued so far are written; later ones start the next. */
  sealActive(): Promise<void> {
    if (this.stopped) return Promise.reject(this.stopped)
    return new Promise<void>((resolve, reject) => {
      this.sealWaiters.push({ resolve: () => resolve(), reject })
      this.kick()
    })
  }

  /** Resolves once everything queued so far is written (or rejected). */
  async drain(): Promise<void> {
    if (this.fill.waiters.length > 0) this.kick()
    while (this.flushing) await this.flushed
  }

  /** Stops the writer: queued appends fail with `error`; no more writes. */
  stop(error: Error): void {
    this.stopped ??= error
    this.fill.rejectFrom(0, error)
    this.fill.reset()
    for (const waiter of this.sealWaiters.splice(0)) waiter.reject(error)
  }

  /** Syncs data written without a sync ('periodic' and 'memory' modes) before a clean close. */
  async syncIfDirty(): Promise<void> {
    if (this.active?.dirty && !this.stopped) await this.syncActive(this.active)
  }

  /** The oldest sealed segment, if every frame in it is at or below `fsn`. */
  trimmable(fsn: bigint): Segment | undefined {
    const seg = this.segments[0]
    // writtenCount, not count: a sealed segment's frames may still await publication in this batch.
    if (!seg || seg === this.active?.seg || seg.baseSeq + BigInt(seg.writtenCount) - 1n > fsn)
      return undefined
    return seg
  }

  /**
   * Removes the oldest segment, which the slot found fully acked: its file is retired for reuse as a
   * later spare, or deleted when enough are retired. Its room goes back to the budget.
   */
  async trimOldest(): Promise<void> {
    const seg = this.segments[0]!
    if (!this.stopped && seg.fileBytes === this.s.segmentBytes && this.retired.length < MAX_RETIRED) {
      const name = `${seg.name}.tmp`
      await this.s.io.rename(this.path(seg.name), this.path(name))
      this.retired.push({ name, staleEnd: dirtyExtent(seg) })
    } else {
      await this.s.io.unlink(this.path(seg.name))
    }
    this.segments.shift()
    this.plan.segments--
    this.prepareSpare()
  }

  /**
   * Deletes the spare and retired files, returning their space (for a watermark write that hit ENOSPC,
   * and on close).
   */
  async discardSpare(): Promise<void> {
    const spare = this.spare ? await this.spare : undefined
    this.spare = undefined
    this.spareReady = false
    const names = this.retired.splice(0).map(({ name }) => name)
    if (spare && !(spare instanceof Error)) {
      await spare.file.close()
      names.push(segmentFileName(spare.gen))
    }
    // Not once another process may own the slot: its recovery removed them, and it may reuse the names.
    await this.hooks.beforeWrite()
    // At once: deleting a large file takes milliseconds (freeing, and trimming on a `discard` mount).
    await Promise.all(names.map((name) => this.s.io.unlink(this.path(name))))
  }

  /** Closes the active file and deletes the spare; the writer must be drained. */
  async close(): Promise<void> {
    this.stopped ??= new Error('closed')
    await this.active?.file.close()
    this.active = undefined
    await this.discardSpare().catch(() => {})
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

  private kick(): void {
    if (this.flushing || this.stopped) return
    this.flushing = true
    this.flushed = this.flushLoop()
  }

  /** One batch at a time (invariant 6); appends queued meanwhile form the next one. */
  private async flushLoop(): Promise<void> {
    try {
      while (!this.stopped) {
        const work = this.fill.waiters.length > 0 || this.sealWaiters.length > 0 || this.syncWanted
        if (!work) return
        // Awaited only when it is a promise: a tick here would let later appends overtake a seal.
        const wait = this.hooks.beforeWrite()
        if (wait && !(await this.fenced(wait))) return
        if (this.fill.waiters.length > 0) await this.flushBatch()
        else if (this.sealWaiters.length > 0) await this.sealNow()
        else if (this.syncWanted) {
          this.syncWanted = false
          await this.syncIfDirty().catch((e) => this.fail(ioError(this.s.dir, 'syncing', e)))
        } else return
      }
    } finally {
      this.flushing = false
    }
  }

  /**
   * Waits for the lock's fence; false when the writer stopped meanwhile or the fence stopped it (the
   * queued appends then fail with its error). Appends made while it waits join the next batch.
   */
  private async fenced(wait: Promise<void>): Promise<boolean> {
    try {
      await wait
    } catch (e) {
      this.fail(e as Error)
    }
    return !this.stopped
  }

  private async flushBatch(): Promise<void> {
    const batch = this.fill
    this.fill = this.idle
    try {
      await this.writeBatch(batch)
    } catch (e) {
      batch.rejectFrom(0, e)
      this.fail(e as Error)
    } finally {
      batch.reset()
      this.idle = batch
    }
  }

  private fail(error: Error): void {
    this.stop(error)
    this.hooks.failed(error)
  }

  /**
   * Writes the batch across as many segments as it needs, syncs as the durability mode requires, then
   * publishes it. A disk-full rotation publishes the frames already sealed and rejects the rest.
   */
  private async writeBatch(batch: GroupCommit): Promise<void> {
    const firstFsn = this.nextFsn
    const n = batch.sizes.length
    batch.encode()
    let i = 0
    try {
      while (i < n) {
        if (!this.active || this.free(this.active) < batch.sizes[i]!) await this.rotate(firstFsn + BigInt(i))
        const a = this.active!
        let j = i
        let bytes = 0
        while (j < n && bytes + batch.sizes[j]! <= this.free(a)) bytes += batch.sizes[j++]!
        a.dirty = true
        await writevFully(a.file, batch.buffers(i, j, a.seg.salt), a.seg.writtenEnd)
        for (let k = i, at = a.seg.writtenEnd; k < j; at += batch.sizes[k++]!)
          noteFrame(a.seg, a.seg.writtenCount++, at)
        a.seg.writtenEnd += bytes
        i = j
      }
      if (this.s.durability === 'append') await this.syncActive(this.active!)
      // Only now, when a rotation took the spare: making a new one (12 MB of zeros for a WAL segment)
      // alongside this batch's fdatasync slowed the sync that the batch's appenders wait for.
      this.prepareSpare()
      this.publish(batch, firstFsn, n)
    } catch (e) {
      if (!(e instanceof RotationDiskFull)) throw ioError(this.s.dir, 'appending', e)
      this.publish(batch, firstFsn, i)
      batch.rejectFrom(i, e.cause)
      this.fill.rejectFrom(0, e.cause)
      this.fill.reset()
      this.resetPlan()
    }
  }

  private free(a: ActiveSegment): number {
    return a.seg.fileBytes - a.seg.writtenEnd
  }

  private publish(batch: GroupCommit, firstFsn: bigint, frames: number): void {
    if (frames === 0) return
    for (let k = this.segments.length - 1; k >= 0; k--) {
      const seg = this.segments[k]!
      if (seg.count === seg.writtenCount) break
      seg.count = seg.writtenCount
      seg.end = seg.writtenEnd
    }
    this.nextFsn = firstFsn + BigInt(frames)
    let fsn = firstFsn
    for (let k = 0; k < frames; k++) batch.waiters[k]!.resolve(fsn++)
    this.hooks.published(this.nextFsn - 1n, frames)
  }

  private async syncActive(a: ActiveSegment): Promise<void> {
    if (!a.dirty) return
    a.dirty = false
    await a.file.datasync()
    this.syncs++
  }

  /**
   * Syncs the active segment (invariant 3), starts the next one with its first frame at `baseSeq`, and
   * seals the old one.
   */
  private async rotate(baseSeq: bigint): Promise<void> {
    const old = this.active
    if (old) await this.syncActive(old)
    const spare = await this.takeSpare()
    const seg = newSegment(spare.gen, baseSeq, this.s.segmentBytes, spare.staleEnd)
    this.active = { seg, file: spare.file, dirty: true }
    this.segments.push(seg)
    const header = encodeSegmentHeader(baseSeq, Date.now(), spare.staleEnd)
    await Promise.all([
      writeFully(spare.file, header, 0, SEGMENT_HEADER_BYTES, 0),
      old && this.seal(old.seg, old.file).then(() => old.file.close()),
    ])
    this.hooks.rotated()
  }

  /**
   * Ends the active segment early (sealActive): nothing is queued, so the next frame plans and starts a
   * new segment, while this one is synced (invariant 3), sealed and closed.
   */
  private async sealNow(): Promise<void> {
    const waiters = this.sealWaiters.splice(0)
    const old = this.active
    try {
      if (old && old.seg.writtenCount > 0) {
        this.active = undefined
        this.resetPlan()
        await this.syncActive(old)
        await this.seal(old.seg, old.file)
        await old.file.close()
        this.hooks.rotated()
      }
      for (const waiter of waiters) waiter.resolve(0n)
    } catch (e) {
      const error = ioError(this.s.dir, 'sealing a segment', e)
      for (const waiter of waiters) waiter.reject(error)
      this.fail(error)
    }
  }

  /**
   * Writes the seal of a segment that will get no more frames (invariant 8) into the last SEAL_BYTES of
   * its file, when its frames left them free (frames never make room for it: a segment holds as many
   * frames as without seals). It is not synced: it only describes frames that are durable already, and
   * a seal lost in a crash just means recovery walks the frames instead.
   */
  private async seal(seg: Segment, file: SlotFile): Promise<void> {
    const at = seg.fileBytes - SEAL_BYTES
    if (seg.writtenEnd > at) return
    const seal = encodeSeal({ baseSeq: seg.baseSeq, count: seg.writtenCount, end: seg.writtenEnd })
    await writeFully(file, seal, 0, SEAL_BYTES, at)
  }

  /**
   * Prepares the next segment in the background while there is room for it (invariant 5): a retired
   * file with a blank header, or else a new file (zero-filled, or sparse: `preallocate`).
   */
  private prepareSpare(): void {
    if (this.spare || this.stopped) return
    const reuse = this.retired.shift()
    if (reuse === undefined && this.segments.length + 1 > this.s.maxSegments) return
    this.spare = this.makeSpare(this.nextGen++, reuse).then(
      (spare) => {
        this.spareReady = true
        return spare
      },
      (e: Error) => e,
    )
  }

  private async takeSpare(): Promise<Spare> {
    const ready = this.spare ? await this.spare : undefined
    this.spare = undefined
    this.spareReady = false
    if (ready && !(ready instanceof Error)) return ready
    try {
      return await this.makeSpare(this.nextGen++, this.retired.shift())
    } catch (e) {
      if (errorCode(e) !== 'ENOSPC') throw e
      throw new RotationDiskFull('', { cause: new DiskFullError(this.s.dir, 'creating a segment', e) })
    }
  }

  /**
   * Makes a spare from a retired file (header zeroed) or a new `<gen>.tmp`, then gives it its
   * segment name durably. A spare's header is blank under its final name, so activating it costs only the
   * header and frame writes and their fdatasync; recovery recognises a blank header as an unused spare.
   */
  private async makeSpare(gen: bigint, reuse?: Retired): Promise<Spare> {
    await this.hooks.beforeWrite()
    const tmp = reuse ? this.path(reuse.name) : this.tmpPath(gen)
    const file = reuse
      ? await blankSegmentFile(this.s.io, tmp)
      : await createSegmentFile(this.s.io, tmp, this.s.segmentBytes, this.s.preallocate)
    try {
      await this.s.io.rename(tmp, this.path(segmentFileName(gen)))
      await this.s.io.syncDir(this.s.dir)
      return { gen, file, staleEnd: reuse?.staleEnd ?? 0 }
    } catch (e) {
      await file.close().catch(() => {})
      throw e
    }
  }

  private tmpPath(gen: bigint): string {
    return this.path(`${segmentFileName(gen)}.tmp`)
  }

  private path(name: string): string {
    return path.join(this.s.dir, name)
  }
}

/** The slot's error for a failed I/O call: SF_DISK_FULL for ENOSPC, our own errors as they are. */
export function ioError(dir: string, during: string, e: unknown): Error {
  if (errorCode(e) === 'ENOSPC') return new DiskFullError(dir, during, e)
  if (errorCode(e)?.startsWith('SF_')) return e as Error
  return new SlotIoError(dir, during, e)
}
