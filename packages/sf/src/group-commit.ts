/**
 * The frames of one group-commit write, laid out for one vectored write per segment they land in. Frame
 * headers and small payload pieces are copied back to back into the batch's buffer (for them a copy
 * costs less than an iovec); a payload piece of IN_PLACE_BYTES or more is written from the caller's
 * buffer, so the bytes of large appends (64 KiB records, WAL batches) are never copied. CRCs are set
 * once the writer knows the segment a frame lands in (format.ts).
 */
import { type Payload, payloadPieces } from './base-slot.js'
import { encodeFrameHeaderInto, FRAME_HEADER_BYTES, setFrameCrc } from './format.js'

const MiB = 1024 * 1024
/**
 * Payload pieces at least this large are written from the caller's buffer. Measured on the slot alone
 * with 4 MiB of durable appends in flight: 2–4 KiB pieces went ~10% faster copied, 8–16 KiB even,
 * 32–64 KiB 7–10% faster in place.
 */
export const IN_PLACE_BYTES = 16 * 1024

const NOTHING: readonly Uint8Array[] = []

export interface Waiter {
  resolve(fsn: bigint): void
  reject(error: unknown): void
}

/** A piece written from the caller's buffer, where it goes between the bytes of `buf`. */
interface InPlace {
  at: number
  piece: Uint8Array
}

export class GroupCommit {
  private static readonly INITIAL_BYTES = 256 * 1024
  private static readonly KEEP_BYTES = 8 * MiB
  private buf = Buffer.allocUnsafe(GroupCommit.INITIAL_BYTES)
  /** Each frame's payload pieces. */
  private payloads: (readonly Uint8Array[])[] = []
  /** Where each frame starts in `buf`, and where the last one ends. */
  private starts: number[] = []
  private end = 0
  /** The pieces written in place, in order, and the index of each frame's first one. */
  private inPlace: InPlace[] = []
  private firstInPlace: number[] = []
  /** Each frame's size on disk. */
  sizes: number[] = []
  waiters: Waiter[] = []

  add(payload: Payload, length: number, waiter: Waiter): void {
    this.payloads.push(payloadPieces(payload))
    this.sizes.push(FRAME_HEADER_BYTES + length)
    this.waiters.push(waiter)
  }

  /** Lays the frames out (without CRCs): headers and small pieces in `buf`, large pieces in place. */
  encode(): void {
    let total = 0
    for (const pieces of this.payloads) total += FRAME_HEADER_BYTES + copiedBytes(pieces)
    if (total > this.buf.length) this.buf = Buffer.allocUnsafe(Math.max(this.buf.length * 2, total))
    let at = 0
    for (const [k, pieces] of this.payloads.entries()) {
      this.starts[k] = at
      this.firstInPlace[k] = this.inPlace.length
      at = encodeFrameHeaderInto(this.buf, at, this.sizes[k]! - FRAME_HEADER_BYTES)
      for (const piece of pieces) {
        if (piece.length >= IN_PLACE_BYTES) this.inPlace.push({ at, piece })
        else {
          this.buf.set(piece, at)
          at += piece.length
        }
      }
    }
    this.end = at
  }

  /**
   * Sets the CRCs of frames `from` to `to - 1` for a segment with this salt and returns the buffers that
   * hold their bytes back to back: runs of `buf` between the pieces written in place. Each CRC covers the
   * bytes as they are written.
   */
  buffers(from: number, to: number, salt: number): Uint8Array[] {
    const out: Uint8Array[] = []
    let run = this.starts[from]!
    let i = this.firstInPlace[from]!
    for (let k = from; k < to; k++) {
      const end = this.frameEnd(k, this.starts, this.end)
      const stop = this.frameEnd(k, this.firstInPlace, this.inPlace.length)
      const head = i < stop ? this.inPlace[i]!.at : end
      // What follows the frame's first run of `buf`: its pieces in place and the runs between them.
      let rest: Uint8Array[] | undefined
      for (; i < stop; i++) {
        const { at, piece } = this.inPlace[i]!
        if (at > run) out.push(this.buf.subarray(run, at))
        out.push(piece)
        rest ??= []
        rest.push(piece, this.buf.subarray(at, i + 1 < stop ? this.inPlace[i + 1]!.at : end))
        run = at
      }
      setFrameCrc(this.buf, this.starts[k]!, head, rest ?? NOTHING, salt)
    }
    const runEnd = this.frameEnd(to - 1, this.starts, this.end)
    if (runEnd > run) out.push(this.buf.subarray(run, runEnd))
    return out
  }

  /** Where frame `k`'s entries in `byFrame` end: at the next frame's first, or `last` after the last. */
  private frameEnd(k: number, byFrame: number[], last: number): number {
    return k + 1 < byFrame.length ? byFrame[k + 1]! : last
  }

  rejectFrom(from: number, error: unknown): void {
    for (let k = from; k < this.waiters.length; k++) this.waiters[k]!.reject(error)
  }

  reset(): void {
    this.payloads = []
    this.starts = []
    this.end = 0
    this.inPlace = []
    this.firstInPlace = []
    this.sizes = []
    this.waiters = []
    if (this.buf.length > GroupCommit.KEEP_BYTES) this.buf = Buffer.allocUnsafe(GroupCommit.INITIAL_BYTES)
  }
}

/** Bytes of these pieces that are copied into the batch buffer. */
function copiedBytes(pieces: readonly Uint8Array[]): number {
  let bytes = 0
  for (const piece of pieces) if (piece.length < IN_PLACE_BYTES) bytes += piece.length
  return bytes
}
