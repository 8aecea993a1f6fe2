/**
 * One segment file: its in-memory descriptor, preallocation of spare files (fresh and zero-filled, or
 * reused with a blank header), the seal, and a chunked frame reader used by recovery (to validate) and by
 * replay (to stream).
 */
import path from 'node:path'
import type { Preallocate } from './base-slot.js'
import {
  checkFrame,
  decodeSeal,
  decodeSegmentHeader,
  FRAME_HEADER_BYTES,
  FRAME_INCOMPLETE,
  FRAME_INVALID,
  frameSalt,
  SEAL_BYTES,
  SEGMENT_HEADER_BYTES,
  type Seal,
  type SegmentHeader,
  segmentFileName,
} from './format.js'
import { readFully, type SlotFile, type SlotFs, writeFully } from './io.js'

/** Replay and recovery keep a frame position every this many bytes, so a seek walks at most this far. */
const CHECKPOINT_BYTES = 64 * 1024
const READ_CHUNK_BYTES = 1024 * 1024

export interface Segment {
  gen: bigint
  /** File name of the segment (`sf-<gen>.sfa`). */
  name: string
  baseSeq: bigint
  /** `frameSalt(baseSeq)`: the CRC state its frames are checked from. */
  salt: number
  /** File size: the space this segment holds on disk. */
  fileBytes: number
  /** Frames and end offset visible to readers (published). */
  count: number
  end: number
  /** Frames and end offset written to the file, ahead of `count`/`end` until the batch is published. */
  writtenCount: number
  writtenEnd: number
  /** (frame index, offset) pairs, roughly CHECKPOINT_BYTES apart, ascending. */
  checkpoints: Array<[number, number]>
  /**
   * Bytes at or after max(staleEnd, writtenEnd) are zeros, except the seal's place: the extent a later
   * reuse of the file records as its header's staleEnd.
   */
  staleEnd: number
}

export function newSegment(gen: bigint, baseSeq: bigint, fileBytes: number, staleEnd = 0): Segment {
  return {
    gen,
    name: segmentFileName(gen),
    baseSeq,
    salt: frameSalt(baseSeq),
    fileBytes,
    count: 0,
    end: SEGMENT_HEADER_BYTES,
    writtenCount: 0,
    writtenEnd: SEGMENT_HEADER_BYTES,
    checkpoints: [],
    staleEnd,
  }
}

/** What a reuse of this segment's file finds in it: the staleEnd of its next header. */
export function dirtyExtent(seg: Segment): number {
  return Math.max(seg.staleEnd, seg.writtenEnd)
}

/** FSN of the last published frame, or baseSeq - 1 when it has none. */
export function lastFsn(seg: Segment): bigint {
  return seg.baseSeq + BigInt(seg.count) - 1n
}

/** Records that a frame with this index starts at this offset. */
export function noteFrame(seg: Segment, index: number, offset: number): void {
  const last = seg.checkpoints[seg.checkpoints.length - 1]
  if (offset - (last ? last[1] : SEGMENT_HEADER_BYTES) >= CHECKPOINT_BYTES)
    seg.checkpoints.push([index, offset])
}

/** The closest known frame position at or before frame `index`. */
export function seek(seg: Segment, index: number): [number, number] {
  let best: [number, number] = [0, SEGMENT_HEADER_BYTES]
  let lo = 0
  let hi = seg.checkpoints.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const cp = seg.checkpoints[mid]!
    if (cp[0] <= index) {
      best = cp
      lo = mid + 1
    } else hi = mid - 1
  }
  return best
}

/**
 * Creates `file` of `bytes` bytes, all zero, and fdatasyncs it; on failure the file is removed.
 * `zeros` writes them: the blocks are reserved now, so a full disk shows here and not in an append, and
 * a later overwrite syncs no allocation. `sparse` only sets the size (one zero byte written at the end):
 * nothing to write or sync now, and the file still reads as zeros, the end of data for recovery.
 */
export function createSegmentFile(
  io: SlotFs,
  file: string,
  bytes: number,
  preallocate: Preallocate,
): Promise<SlotFile> {
  return prepared(io, file, 'w+', (f) =>
    preallocate === 'zeros' ? writeZeros(f, 0, bytes) : writeFully(f, new Uint8Array(1), 0, 1, bytes - 1),
  )
}

/**
 * Opens a retired segment file for reuse: its header is zeroed and fdatasync'd, so that under its next
 * name it reads as an unused spare until a new header starts it. Its frames stay (see format.ts). On
 * failure the file is removed.
 */
export function blankSegmentFile(io: SlotFs, file: string): Promise<SlotFile> {
  return prepared(io, file, 'r+', (f) => writeZeros(f, 0, SEGMENT_HEADER_BYTES))
}

/** Opens `file`, writes to it with `fill` and fdatasyncs it; removes the file on failure. */
async function prepared(
  io: SlotFs,
  file: string,
  mode: 'w+' | 'r+',
  fill: (f: SlotFile) => Promise<void>,
): Promise<SlotFile> {
  const f = await io.open(file, mode)
  try {
    await fill(f)
    await f.datasync()
    return f
  } catch (e) {
    await f.close().catch(() => {})
    await io.unlink(file).catch(() => {})
    throw e
  }
}

async function writeZeros(f: SlotFile, from: number, to: number): Promise<void> {
  const zeros = zeroBuffer()
  for (let pos = from; pos < to; pos += zeros.length) {
    await writeFully(f, zeros, 0, Math.min(zeros.length, to - pos), pos)
  }
}

let zeros: Buffer | undefined
/** One shared buffer of zeros, as large as a default segment so that one write fills it. */
function zeroBuffer(): Buffer {
  zeros ??= Buffer.alloc(4 * 1024 * 1024)
  return zeros
}

/**
 * Reads consecutive frames of one segment file in chunks, with memory bounded by the chunk size plus the
 * largest frame. `next()` is synchronous while the frame is buffered and returns FRAME_INCOMPLETE when
 * `refill()` must run first.
 */
export class FrameReader {
  private buf: Buffer
  /** File offset of buf[0]. */
  private bufStart: number
  private bufLength = 0
  /** File offset of the next frame. */
  pos: number
  /** Offset of the current frame's payload inside `buffer`. */
  payloadAt = 0
  private readonly chunkBytes: number

  constructor(
    private readonly file: SlotFile,
    /** `frameSalt` of the segment's baseSeq. */
    private readonly salt: number,
    start: number,
    /** Frames never extend past this file offset (file size or published end). */
    public limit: number,
    /** Initial buffer size; the file size caps it for small segments. */
    chunkBytes = READ_CHUNK_BYTES,
  ) {
    this.chunkBytes = Math.max(FRAME_HEADER_BYTES, chunkBytes)
    this.buf = Buffer.allocUnsafe(this.chunkBytes)
    this.bufStart = start
    this.pos = start
  }

  get buffer(): Buffer {
    return this.buf
  }

  /** Payload length of the frame at `pos` (and advances past it), FRAME_INCOMPLETE or FRAME_INVALID. */
  next(): number {
    const at = this.pos - this.bufStart
    const n = checkFrame(this.buf, at, this.bufLength, this.limit - this.pos, this.salt)
    if (n >= 0) {
      this.payloadAt = at + FRAME_HEADER_BYTES
      this.pos += FRAME_HEADER_BYTES + n
    }
    return n
  }

  /**
   * The payload of the frame `next` just returned (`n` bytes), as a buffer the caller may keep. A frame
   * larger than the read chunk had the buffer grown for it alone: that buffer is handed over and the
   * reader starts a new one, so a large frame costs one allocation instead of two and a copy.
   */
  keepPayload(n: number): Buffer {
    const payload = this.buf.subarray(this.payloadAt, this.payloadAt + n)
    if (this.buf.length <= this.chunkBytes) return Buffer.from(payload)
    const rest = this.buf.subarray(this.pos - this.bufStart, this.bufLength)
    this.buf = Buffer.allocUnsafe(Math.max(this.chunkBytes, rest.length))
    rest.copy(this.buf)
    this.bufStart = this.pos
    this.bufLength = rest.length
    return payload
  }

  /** Reads more of the file; false when nothing more could be read (end of file or limit). */
  async refill(): Promise<boolean> {
    const keep = this.bufStart + this.bufLength - this.pos
    const want = this.neededBytes(keep)
    if (want > this.buf.length) {
      const bigger = Buffer.allocUnsafe(want)
      this.buf.copy(bigger, 0, this.pos - this.bufStart, this.pos - this.bufStart + keep)
      this.buf = bigger
    } else {
      this.buf.copy(this.buf, 0, this.pos - this.bufStart, this.pos - this.bufStart + keep)
    }
    this.bufStart = this.pos
    this.bufLength = keep
    const room = Math.min(this.buf.length - keep, this.limit - (this.pos + keep))
    if (room <= 0) return false
    const n = await readFully(this.file, this.buf, keep, room, this.pos + keep)
    this.bufLength += n
    return n > 0
  }

  /** Buffer size needed to hold the whole frame at `pos` once `keep` bytes of it are buffered. */
  private neededBytes(keep: number): number {
    if (keep < FRAME_HEADER_BYTES) return this.buf.length
    const n = this.buf.readUInt32LE(this.pos - this.bufStart + 4)
    return Math.max(this.buf.length, Math.min(FRAME_HEADER_BYTES + n, this.limit - this.pos))
  }

  /**
   * Steps to the next frame, refilling as needed: payload length, FRAME_END or FRAME_INVALID. Returns a
   * plain number while the frame is buffered, so hot loops can skip an await per frame.
   */
  nextFrame(): number | Promise<number> {
    if (this.pos >= this.limit) return FRAME_END
    const n = this.next()
    return n === FRAME_INCOMPLETE ? this.refillAndNext() : n
  }

  private async refillAndNext(): Promise<number> {
    for (;;) {
      if (!(await this.refill())) return FRAME_INVALID
      const n = this.next()
      if (n !== FRAME_INCOMPLETE) return n
    }
  }
}

/** nextFrame(): the reader reached its limit exactly at a frame boundary. */
export const FRAME_END = -3

export interface SegmentScan {
  header: SegmentHeader
  fileBytes: number
  count: number
  /** Offset after the last valid frame. */
  end: number
  checkpoints: Array<[number, number]>
  /** Non-zero bytes after the end of data, except what the file's previous use may have left. */
  tornBytes: number
  /** Offset of the last non-zero byte after the end of data, + 1 (end when there is none). */
  tornEnd: number
  /** A valid frame was found after the end of data: the segment is damaged, not torn. */
  damaged: boolean
  /** Count and end come from the seal; the frames were not read (replay checks them). */
  sealed: boolean
}

/**
 * Validates the header, then takes count and end from a valid seal or, without one, walks every frame.
 * A string explains why the header is unusable.
 */
export async function scanSegment(io: SlotFs, dir: string, name: string): Promise<SegmentScan | string> {
  const file = await io.open(path.join(dir, name), 'r')
  try {
    const fileBytes = await file.size()
    const head = Buffer.alloc(SEGMENT_HEADER_BYTES)
    const got = await readFully(file, head, 0, SEGMENT_HEADER_BYTES, 0)
    const header = decodeSegmentHeader(head.subarray(0, got))
    if (typeof header === 'string') return header
    const seal = await readSeal(file, header.baseSeq, fileBytes)
    if (seal) {
      const { count, end } = seal
      return {
        header,
        fileBytes,
        count,
        end,
        checkpoints: [],
        tornBytes: 0,
        tornEnd: end,
        damaged: false,
        sealed: true,
      }
    }
    const seg = newSegment(0n, header.baseSeq, fileBytes)
    const reader = new FrameReader(
      file,
      seg.salt,
      SEGMENT_HEADER_BYTES,
      fileBytes,
      Math.min(READ_CHUNK_BYTES, fileBytes),
    )
    for (;;) {
      const at = reader.pos
      let n = reader.nextFrame()
      if (typeof n !== 'number') n = await n
      if (n < 0) break
      noteFrame(seg, seg.count, at)
      seg.count++
    }
    const end = reader.pos
    const tail = await examineTail(file, seg.salt, end, fileBytes, header.staleEnd)
    return { header, fileBytes, count: seg.count, end, checkpoints: seg.checkpoints, ...tail, sealed: false }
  } finally {
    await file.close()
  }
}

async function readSeal(file: SlotFile, baseSeq: bigint, fileBytes: number): Promise<Seal | undefined> {
  if (fileBytes < SEGMENT_HEADER_BYTES + SEAL_BYTES) return undefined
  const b = Buffer.alloc(SEAL_BYTES)
  const n = await readFully(file, b, 0, SEAL_BYTES, fileBytes - SEAL_BYTES)
  return decodeSeal(b.subarray(0, n), baseSeq, fileBytes)
}

/**
 * Counts non-zero bytes after the end of data and looks for a valid frame among them. In a reused file,
 * bytes before `staleEnd` and in the seal's place may be the previous use's, so they are not counted as
 * torn (a torn append there goes uncounted: the count is informational); they are still zeroed on open.
 */
async function examineTail(
  file: SlotFile,
  salt: number,
  end: number,
  fileBytes: number,
  staleEnd: number,
): Promise<{ tornBytes: number; tornEnd: number; damaged: boolean }> {
  const tail = Buffer.allocUnsafe(fileBytes - end)
  const n = await readFully(file, tail, 0, tail.length, end)
  const countFrom = Math.max(0, staleEnd - end)
  const countTo = staleEnd > 0 ? n - SEAL_BYTES : n
  let tornBytes = 0
  let last = -1
  for (let i = 0; i < n; i++) {
    if (tail[i] !== 0) {
      if (i >= countFrom && i < countTo) tornBytes++
      last = i
    }
  }
  if (last < 0) return { tornBytes, tornEnd: end, damaged: false }
  return { tornBytes, tornEnd: end + last + 1, damaged: hasValidFrameAfter(tail.subarray(0, n), last, salt) }
}

/**
 * True when a valid frame starts at some offset in 1..lastNonZero of `tail`. An all-zero frame header is
 * never valid, so later offsets cannot start one. Frames left by the file's previous use never pass: their
 * CRCs have another salt.
 */
function hasValidFrameAfter(tail: Buffer, lastNonZero: number, salt: number): boolean {
  for (let at = 1; at <= lastNonZero && at + FRAME_HEADER_BYTES <= tail.length; at++) {
    if (checkFrame(tail, at, tail.length, tail.length - at, salt) >= 0) return true
  }
  return false
}
