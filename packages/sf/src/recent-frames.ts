/**
 * Copies of the payloads a sender just appended, kept until the forwarder sends them, so that in the
 * steady state it sends from memory instead of reading back from disk what it was handed a moment ago.
 * Only a fast path: a frame missing here (cache full, or evicted) is read from the slot as always, and
 * replays after a reconnect come from the slot. Bounded by bytes, including copies whose append is still
 * in flight.
 */
export class RecentFrames {
  private readonly frames = new Map<bigint, Uint8Array>()
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  /**
   * A private copy of `payload` (the caller may reuse its buffer once the append resolves), counted
   * against the budget; undefined when the budget is spent. Hand it to `offer` or `release`.
   */
  hold(payload: Uint8Array): Uint8Array | undefined {
    if (this.bytes + payload.length > this.maxBytes) return undefined
    this.bytes += payload.length
    return Buffer.from(payload)
  }

  /** The held copy was appended as frame `fsn`. */
  offer(fsn: bigint, copy: Uint8Array): void {
    this.frames.set(fsn, copy)
  }

  /** The held copy's append failed. */
  release(copy: Uint8Array): void {
    this.bytes -= copy.length
  }

  has(fsn: bigint): boolean {
    return this.frames.has(fsn)
  }

  /** Removes and returns frame `fsn`, if held. */
  take(fsn: bigint): Uint8Array | undefined {
    const payload = this.frames.get(fsn)
    if (payload === undefined) return undefined
    this.frames.delete(fsn)
    this.bytes -= payload.length
    return payload
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
      const payload = this.take(fsn)
      if (payload === undefined) return
      yield { fsn, payload }
    }
  }
}
