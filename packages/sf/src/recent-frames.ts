/**
 * The sender's private copies of just-appended payloads, kept until the forwarder sends them, so that in
 * the steady state it sends from memory instead of reading back from disk what it was handed a moment
 * ago. Only a fast path: a frame missing here (cache full, or evicted) is read from the slot as always,
 * and replays after a reconnect come from the slot. Bounded by bytes, including copies whose append is
 * still in flight.
 */
import { encodeLoneRecord } from './wire.js'

/**
 * A payload this large is copied into a DATA message of its own, and the forwarder sends it from memory
 * as that message: sharing a DATA message (256 KiB) would save few messages, at the cost of a copy.
 */
export const LONE_RECORD_BYTES = 64 * 1024

/**
 * The private copy of a payload the sender appends (the caller may reuse its buffer at once): a large one
 * is the payload view of its own DATA message (`encodeLoneRecord`), a small one a plain copy, as it will
 * be copied into a shared DATA message anyway.
 */
export function privateCopy(payload: Uint8Array): Uint8Array {
  if (payload.length >= LONE_RECORD_BYTES) return encodeLoneRecord(payload)
  const copy = Buffer.allocUnsafe(payload.length)
  copy.set(payload)
  return copy
}

export class RecentFrames {
  private readonly frames = new Map<bigint, Uint8Array>()
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  /**
   * Counts the private copy `payload` (from `privateCopy`) against the budget; false when the budget is
   * spent. Once true, hand it to `offer` or `release`.
   */
  hold(payload: Uint8Array): boolean {
    if (this.bytes + payload.length > this.maxBytes) return false
    this.bytes += payload.length
    return true
  }

  /** The held copy was appended as frame `fsn`. */
  offer(fsn: bigint, payload: Uint8Array): void {
    this.frames.set(fsn, payload)
  }

  /** The held copy's append failed. */
  release(payload: Uint8Array): void {
    this.bytes -= payload.length
  }

  has(fsn: bigint): boolean {
    return this.frames.has(fsn)
  }

  /** Forgets frames below `fsn` (acknowledged, or sent already from disk). */
  dropBelow(fsn: bigint): void {
    for (const [held, payload] of this.frames) {
      if (held >= fsn) continue
      this.frames.delete(held)
      this.bytes -= payload.length
    }
  }

  /** Frames `from`, `from + 1`, … for as long as they are held, each removed as it is yielded. */
  *takeFrom(from: bigint): Generator<{ fsn: bigint; payload: Uint8Array }> {
    for (let fsn = from; ; fsn++) {
      const payload = this.frames.get(fsn)
      if (payload === undefined) return
      this.frames.delete(fsn)
      this.bytes -= payload.length
      yield { fsn, payload }
    }
  }
}
