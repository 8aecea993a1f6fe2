import { BAD_RECORD, SkipprError } from '@skippr/connector-api'

/**
 * A payload that does not decode in its format: which record (1-based; for JSON lines and CSV the
 * line of the payload, header included) and why. Nothing of the payload is taken.
 */
export class PushDecodeError extends SkipprError {
  constructor(
    readonly record: number,
    readonly reason: string,
    readonly unit: 'line' | 'record' = 'line',
  ) {
    super(BAD_RECORD, `${unit} ${record}: ${reason}`)
  }
}

/** `push` refused: the bytes pushed but not committed yet would exceed the cap. The sender retries later. */
export class PushQueueFullError extends SkipprError {
  constructor(
    readonly pendingBytes: number,
    readonly maxPendingBytes: number,
  ) {
    super('PUSH_QUEUE_FULL', `${pendingBytes} bytes wait for their commit, at most ${maxPendingBytes} may`)
  }
}

/**
 * A push whose rows were never committed: the run stops (`stopping`, the sender may retry against
 * the next run) or failed (`failed`, e.g. the WAL commit failed).
 */
export class PushAbandonedError extends SkipprError {
  constructor(
    readonly why: 'stopping' | 'failed',
    cause?: unknown,
  ) {
    super(
      'PUSH_ABANDONED',
      why === 'stopping'
        ? 'the source is stopping; the rows were not committed'
        : 'the rows were not committed',
      { cause },
    )
  }
}
