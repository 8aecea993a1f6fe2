/** The sender's observability counters (the seed's list), kept as plain mutable numbers. */
export interface SenderCounters {
  /** Wire outages begun: each time the connection broke (or could not be made) and retrying started. */
  totalReconnectAttempts: number
  /** Outages that ended with a new connection. attempts − succeeded ≠ 0 means the wire is down now. */
  totalReconnectsSucceeded: number
  /** Frames sent again because an earlier connection had sent them but they were not acknowledged. */
  totalFramesReplayed: number
  /** Error frames received from the receiver (HALT and DROP). */
  totalServerErrors: number
  /** Error notifications not delivered because the inbox was full (or still queued at close). */
  droppedErrorNotifications: number
  /** Error notifications handed to the error handler. */
  totalErrorNotificationsDelivered: number
  /** `send`/`sendBlocking` calls that found the slot at its capacity. */
  totalBackpressureStalls: number
  /** The latched terminal error, or null. */
  lastTerminalError: Error | null
  /** Orphan drainers running now. */
  activeBackgroundDrainers: number
  totalBackgroundDrainersSucceeded: number
  totalBackgroundDrainersFailed: number
}

export function newCounters(): SenderCounters {
  return {
    totalReconnectAttempts: 0,
    totalReconnectsSucceeded: 0,
    totalFramesReplayed: 0,
    totalServerErrors: 0,
    droppedErrorNotifications: 0,
    totalErrorNotificationsDelivered: 0,
    totalBackpressureStalls: 0,
    lastTerminalError: null,
    activeBackgroundDrainers: 0,
    totalBackgroundDrainersSucceeded: 0,
    totalBackgroundDrainersFailed: 0,
  }
}
