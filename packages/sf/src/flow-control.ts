/**
 * Flow control of one connection: frames received but not yet handed to the application wait here, in
 * order, and the socket stops reading while too many bytes wait, so a slow application makes the sender
 * stall (its TCP window fills) instead of the receiver's memory growing.
 *
 * Invariants: `bytes` is the payload size of the waiting frames; the socket is paused above
 * `QUEUE_HIGH_WATER_BYTES` and resumed at half of it (the gap keeps it from flapping per message); a
 * batch is at most `BATCH_BYTES` unless a single frame is larger, which then goes alone.
 */
import type { Frame } from './wire.js'

/** Received-but-unhandled bytes per connection above which the socket stops reading. */
const QUEUE_HIGH_WATER_BYTES = 8 * 1024 * 1024
/** Bytes handed to one `onFrames` call at most (a single larger frame still goes alone). */
const BATCH_BYTES = 4 * 1024 * 1024

/** The reading side of a socket (a `ws` WebSocket). */
export interface Pausable {
  pause(): void
  resume(): void
}

export class InboundQueue {
  private readonly frames: Frame[] = []
  private bytes = 0

  constructor(private readonly socket: Pausable) {}

  get isEmpty(): boolean {
    return this.frames.length === 0
  }

  push(frames: readonly Frame[]): void {
    for (const f of frames) {
      this.frames.push(f)
      this.bytes += f.payload.length
    }
    if (this.bytes > QUEUE_HIGH_WATER_BYTES) this.socket.pause()
  }

  /** Takes the next batch off the queue (the queue must not be empty). */
  takeBatch(): Frame[] {
    let bytes = 0
    let n = 0
    while (n < this.frames.length && (n === 0 || bytes + this.frames[n]!.payload.length <= BATCH_BYTES)) {
      bytes += this.frames[n]!.payload.length
      n++
    }
    this.bytes -= bytes
    if (this.bytes <= QUEUE_HIGH_WATER_BYTES / 2) this.socket.resume()
    return this.frames.splice(0, n)
  }

  /** Discards what waits (the sender was halted; the frames will not be handled). */
  clear(): void {
    this.frames.length = 0
    this.bytes = 0
  }
}
