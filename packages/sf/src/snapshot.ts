/**
 * A read-only view of a slot's unacked frames for another process while the slot's owner keeps
 * writing (e.g. `skipprd query` beside a running `skipprd sync`). It never takes the slot lock and
 * never writes a byte, so the writer cannot notice it.
 *
 * What it shows is a prefix of the log: the frames after the ack watermark, in FSN order, up to the
 * first frame it cannot read whole — the append in progress (or a torn tail), the end of the last
 * segment, or a gap. Frames are CRC32C-checked like recovery checks them, so a frame still being
 * written is never returned part-written; a frame whose append awaits its fdatasync may be returned
 * (recovery after a process crash keeps such a frame too).
 *
 * Trimming may delete segments at any time. Every segment file is opened before the watermark is
 * read, and an open file stays readable after it is unlinked, so the frames above the watermark are
 * all in files already open. A segment that vanishes between listing and opening makes it list again.
 * Trimmed segments may also be reused for new frames while a snapshot holds them open. The new
 * frames fail the old segment's CRC checks, but frames skipped by their length fields are not checked,
 * so every frame is returned only after the segment's header is seen unchanged (`stillHolds`). A file
 * found reused was trimmed, so every frame it held is acked by then (invariant 4): the snapshot reads
 * the watermark again and goes on after it in the files it holds, skipping the frames acked meanwhile
 * (`ackedFsn` rises with it). Ending there instead would leave out frames that were unacked all along.
 */
import path from 'node:path'
import type { SlotFrame } from './base-slot.js'
import { SlotIoError } from './errors.js'
import {
  decodeSegmentHeader,
  FRAME_HEADER_BYTES,
  frameSalt,
  parseSegmentFileName,
  SEGMENT_HEADER_BYTES,
} from './format.js'
import { errorCode, nodeFs, readFully, type SlotFile, type SlotFs } from './io.js'
import { FrameReader } from './segment.js'
import { readWatermark } from './watermark.js'

/** Listing again when a segment vanished is cheap; running out of attempts needs a pathological writer. */
const MAX_ATTEMPTS = 50

export interface SlotSnapshotOptions {
  /** The group root; the slot is `<sfDir>/<senderId>/`. */
  sfDir: string
  senderId?: string
  io?: SlotFs
}

interface OpenSegment {
  readonly name: string
  readonly baseSeq: bigint
  readonly file: SlotFile
}

export interface SlotSnapshot {
  /**
   * The ack watermark the frames follow: the one read at the start, or a later one read when a file
   * the snapshot holds was trimmed and reused while frames() read it (frames() then steps over to it).
   */
  readonly ackedFsn: bigint
  /**
   * The unacked frames from `fromFsn` on (default: all), in FSN order, each payload a copy the
   * caller may keep. Frames before `fromFsn` are stepped over by their length fields without being
   * read or checked: pass only an FSN that follows frames an earlier snapshot read whole. Read it once.
   */
  frames(fromFsn?: bigint): AsyncGenerator<SlotFrame>
  /** Closes the segment files (frames() does when it finishes). */
  close(): Promise<void>
}

/** Takes a snapshot of the slot; an absent slot directory is an empty snapshot. */
export async function openSlotSnapshot(options: SlotSnapshotOptions): Promise<SlotSnapshot> {
  const io = options.io ?? nodeFs
  const dir = path.join(options.sfDir, options.senderId ?? 'default')
  for (let attempt = 1; ; attempt++) {
    const before = await watermarkOf(io, dir, undefined)
    const segments = await openSegments(io, dir)
    if (segments !== undefined) {
      const acked = await watermarkOf(io, dir, segments[0]?.baseSeq)
      // A watermark that went backwards means the slot was cleared and started again meanwhile.
      if (before === undefined || acked >= before) return new Snapshot(io, dir, segments, acked)
      await closeAll(segments)
    }
    if (attempt === MAX_ATTEMPTS) {
      throw new SlotIoError(
        dir,
        'taking a read snapshot',
        new Error(`its segments changed during ${attempt} attempts`),
      )
    }
  }
}

/**
 * The acked FSN: the watermark file, but never below the frames trimming already removed (recovery
 * reads it the same way). Undefined when there is neither a watermark nor a segment to go by.
 */
async function watermarkOf(io: SlotFs, dir: string, lowestBase: bigint | undefined): Promise<bigint> {
  const read = await readWatermark(io, dir)
  const fsn = read !== undefined && 'fsn' in read ? read.fsn : 0n
  const floor = lowestBase === undefined ? 0n : lowestBase - 1n
  return fsn > floor ? fsn : floor
}

/** Every readable segment, ordered by base FSN; undefined if one vanished before it could be opened. */
async function openSegments(io: SlotFs, dir: string): Promise<OpenSegment[] | undefined> {
  const opened: OpenSegment[] = []
  for (const name of await io.readdir(dir)) {
    if (parseSegmentFileName(name) === undefined) continue
    let file: SlotFile
    try {
      file = await io.open(path.join(dir, name), 'r')
    } catch (e) {
      await closeAll(opened)
      if (errorCode(e) === 'ENOENT') return undefined
      throw new SlotIoError(dir, `opening ${name} for reading`, e)
    }
    const header = Buffer.alloc(SEGMENT_HEADER_BYTES)
    const decoded = decodeSegmentHeader(
      header.subarray(0, await readFully(file, header, 0, header.length, 0)),
    )
    // An unreadable header: recovery reports its frames as lost; a reader can only skip them.
    if (typeof decoded === 'string') await file.close()
    else opened.push({ name, baseSeq: decoded.baseSeq, file })
  }
  return opened.sort((a, b) => (a.baseSeq < b.baseSeq ? -1 : a.baseSeq > b.baseSeq ? 1 : 0))
}

async function closeAll(segments: readonly OpenSegment[]): Promise<void> {
  await Promise.all(segments.map((s) => s.file.close().catch(() => {})))
}

class Snapshot implements SlotSnapshot {
  private closed = false

  constructor(
    private readonly io: SlotFs,
    private readonly dir: string,
    private readonly segments: readonly OpenSegment[],
    private acked: bigint,
  ) {}

  get ackedFsn(): bigint {
    return this.acked
  }

  async *frames(fromFsn = 0n): AsyncGenerator<SlotFrame> {
    try {
      let next = fromFsn > this.acked ? fromFsn : this.acked + 1n
      for (const [i, segment] of this.segments.entries()) {
        const successor = this.segments[i + 1]
        // Wholly acked (trimming has not caught up): nothing in it to read.
        if (successor !== undefined && successor.baseSeq <= next) continue
        for await (const frame of readFrames(segment, next)) {
          if (frame.fsn < next) continue
          // A gap: the frames in between cannot be read, so nothing after them belongs to the prefix.
          if (frame.fsn > next) return
          yield frame
          next++
        }
        // Trimmed and reused under this read: its frames, and maybe the next files', are acked now.
        if (!(await stillHolds(segment))) {
          const acked = await watermarkOf(this.io, this.dir, undefined)
          if (acked > this.acked) this.acked = acked
          if (this.acked >= next) next = this.acked + 1n
        }
      }
    } finally {
      await this.close()
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await closeAll(this.segments)
  }
}

/**
 * The frames of one segment from `fromFsn` (or its first) to the first one that is not whole and
 * valid. Frames before `fromFsn` are skipped by their length fields alone.
 */
async function* readFrames(segment: OpenSegment, fromFsn: bigint): AsyncGenerator<SlotFrame> {
  const size = await segment.file.size()
  let fsn = segment.baseSeq
  let pos = SEGMENT_HEADER_BYTES
  const header = Buffer.alloc(FRAME_HEADER_BYTES)
  for (; fsn < fromFsn; fsn++) {
    if ((await readFully(segment.file, header, 0, FRAME_HEADER_BYTES, pos)) < FRAME_HEADER_BYTES) return
    const n = header.readUInt32LE(4)
    if (n === 0 || pos + FRAME_HEADER_BYTES + n > size) return
    pos += FRAME_HEADER_BYTES + n
  }
  const reader = new FrameReader(segment.file, frameSalt(segment.baseSeq), pos, size)
  for (; ; fsn++) {
    const n = await reader.nextFrame()
    if (n < 0) return
    const payload = reader.keepPayload(n)
    // Checked after the read: the writer blanks a reused file's header before anything else.
    if (!(await stillHolds(segment))) return
    yield { fsn, payload }
  }
}

/**
 * Whether the open file still is the segment it was when opened. Trimmed segments are kept and
 * reused as new ones: the writer blanks the header first, then writes the new header (a higher
 * baseSeq) and frames. So a frame read before the header still shows the old baseSeq is the old
 * segment's, and a frame that could be the new segment's is never returned under an old FSN.
 */
async function stillHolds(segment: OpenSegment): Promise<boolean> {
  const header = Buffer.alloc(SEGMENT_HEADER_BYTES)
  const decoded = decodeSegmentHeader(
    header.subarray(0, await readFully(segment.file, header, 0, header.length, 0)),
  )
  return typeof decoded !== 'string' && decoded.baseSeq === segment.baseSeq
}
