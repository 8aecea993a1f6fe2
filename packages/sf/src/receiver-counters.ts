/** The receiver's observability counters, kept as plain mutable numbers (read with `receiver.counters()`). */
import type { ErrorCategory } from './wire.js'

export interface ReceiverCounters {
  /** Senders whose connection got WELCOME and is open now. */
  sendersConnected: number
  /** Connections that got WELCOME: each sender's first, and each reconnect. */
  sessionsOpened: number
  /** Frames received in DATA messages, replays included. */
  framesReceived: number
  /** Received frames already delivered (replayed after a reconnect): acked, not handed over again. */
  framesReplayed: number
  /** Error frames sent to senders, by category. */
  errorsSent: Record<ErrorCategory, number>
}

export function newReceiverCounters(): ReceiverCounters {
  return {
    sendersConnected: 0,
    sessionsOpened: 0,
    framesReceived: 0,
    framesReplayed: 0,
    errorsSent: { HALT: 0, DROP: 0 },
  }
}
