/**
 * Every error @skippr/sf throws. Identify an error by its `code`, never by `instanceof` (two copies of the
 * package in one process have different classes). Messages state the situation and the fix.
 */

export class SfError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

// ---- the slot ----

/** An option passed to openSlot / openMemorySlot is out of range. */
export class SlotOptionError extends SfError {
  constructor(option: string, problem: string) {
    super('SF_INVALID_OPTION', `slot option ${option}: ${problem}`)
  }
}

/** Another live owner holds the slot directory. */
export class SlotLockedError extends SfError {
  readonly holderPid: number | undefined
  readonly holderHost: string | undefined
  constructor(slotDir: string, holder: { pid?: number; host?: string } | undefined, detail = '') {
    const who =
      holder?.pid === undefined ? 'holder=unknown' : `PID ${holder.pid} on host ${holder.host ?? '?'}`
    super(
      'SF_SLOT_LOCKED',
      `slot ${slotDir} is held by ${who}${detail ? ` (${detail})` : ''}; stop the other sender or give this ` +
        'one a different senderId. If the holder is gone, the lock is taken over automatically once its ' +
        'heartbeat is stale; only then remove .lock.owner/ by hand',
    )
    this.holderPid = holder?.pid
    this.holderHost = holder?.host
  }
}

/** This process lost the slot lock (another process took it over while this one was paused). */
export class SlotLockLostError extends SfError {
  constructor(slotDir: string, detail: string) {
    super(
      'SF_LOCK_LOST',
      `slot ${slotDir}: this process no longer owns the lock (${detail}); it stopped writing. Make sure only ` +
        'one process uses a sender id, and that the event loop is never blocked for longer than lockStaleMs',
    )
  }
}

/** The slot was closed, or broke on an earlier I/O error; reopen it to continue. */
export class SlotClosedError extends SfError {
  constructor(slotDir: string, reason: string, options?: { cause?: unknown }) {
    super('SF_SLOT_CLOSED', `slot ${slotDir} is not usable: ${reason}; open the slot again`, options)
  }
}

/** A single frame cannot fit in a segment. */
export class FrameTooLargeError extends SfError {
  constructor(bytes: number, maxBytes: number) {
    super(
      'SF_FRAME_TOO_LARGE',
      `a frame of ${bytes} bytes does not fit in a segment (at most ${maxBytes} payload bytes); ` +
        'split the payload or raise maxSegmentBytes',
    )
  }
}

/** append(): the slot is at maxTotalBytes. */
export class SlotFullError extends SfError {
  constructor(detail: string) {
    super(
      'SF_BACKPRESSURE',
      `slot is full: ${detail}; wait for acks (appendBlocking does), or raise maxTotalBytes`,
    )
  }
}

/** appendBlocking(): no space was freed before appendDeadlineMs. */
export class AppendDeadlineError extends SfError {
  constructor(deadlineMs: number, why: string) {
    super(
      'SF_APPEND_DEADLINE',
      `appendBlocking waited ${deadlineMs} ms for space and gave up: ${why}; ` +
        'fix the receiver or link, raise maxTotalBytes, or raise appendDeadlineMs',
    )
  }
}

/** The file system is full (ENOSPC). The slot stays consistent; frames already durable are kept. */
export class DiskFullError extends SfError {
  constructor(slotDir: string, during: string, cause: unknown) {
    super(
      'SF_DISK_FULL',
      `no space left on the device holding ${slotDir} while ${during}; free disk space (acks trim the slot) ` +
        'and retry the append',
      { cause },
    )
  }
}

/** An I/O call failed. After a failed write or sync the slot stops (fail-stop) and must be reopened. */
export class SlotIoError extends SfError {
  constructor(slotDir: string, during: string, cause: unknown) {
    super(
      'SF_IO',
      `I/O error in slot ${slotDir} while ${during}: ${(cause as Error)?.message ?? String(cause)}; ` +
        'check the disk, then reopen the slot (recovery keeps every durable frame)',
      { cause },
    )
  }
}

/** Recovery found segments whose FSN ranges do not meet: a segment was removed out of band. */
export class SegmentGapError extends SfError {
  readonly fromFsn: bigint
  readonly toFsn: bigint
  constructor(slotDir: string, fromFsn: bigint, toFsn: bigint, before: string, after: string) {
    super(
      'SF_SEGMENT_GAP',
      `gap between segments in ${slotDir}: FSNs ${fromFsn}..${toFsn} are missing between ${before} and ` +
        `${after} (a segment was deleted out of band); restore it from backup, or accept the loss by ` +
        'moving the segments below the gap out of the slot directory',
    )
    this.fromFsn = fromFsn
    this.toFsn = toFsn
  }
}

/** Recovery found segments that cannot belong to one slot (overlapping FSN ranges). */
export class SlotCorruptError extends SfError {
  constructor(slotDir: string, detail: string, fix = 'Move the offending segment out of the slot directory') {
    super(
      'SF_SLOT_CORRUPT',
      `slot ${slotDir} cannot be recovered: ${detail}; a file was copied in or altered out of band. ${fix}`,
    )
  }
}

/** ack() named an FSN that was never published. */
export class AckOutOfRangeError extends SfError {
  constructor(fsn: bigint, publishedFsn: bigint) {
    super(
      'SF_ACK_OUT_OF_RANGE',
      `ack(${fsn}) is above publishedFsn ${publishedFsn}; acks must name an FSN this slot published`,
    )
  }
}

/** replay() read a frame whose checksum no longer matches (the disk changed under a running slot). */
export class CorruptFrameError extends SfError {
  constructor(segment: string, fsn: bigint) {
    super(
      'SF_CORRUPT_FRAME',
      `frame ${fsn} in ${segment} failed its CRC32C check during replay; the disk is damaging data. ` +
        'Reopen the slot: recovery reports the lost range',
    )
  }
}

// ---- sender, receiver and wire protocol ----

/** A connect string or sender option is unknown or has a bad value. One line, naming the key. */
export class SenderConfigError extends SfError {
  readonly key: string
  constructor(key: string, problem: string) {
    super('SF_CONFIG_INVALID', `sender config: ${key}: ${problem}`)
    this.key = key
  }
}

/** A wire message could not be decoded. */
export class WireFormatError extends SfError {
  constructor(detail: string) {
    super('SF_WIRE_MALFORMED', `malformed store-and-forward wire message: ${detail}`)
  }
}

/**
 * The peer broke the wire protocol (malformed message, out-of-order FSN, oversized frame). The side that
 * detects it closes the connection with the reason; the sender treats it as terminal.
 */
export class ProtocolViolationError extends SfError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(
      'SF_PROTOCOL_VIOLATION',
      `store-and-forward protocol violation: ${detail}; check that sender and receiver run compatible @skippr/sf versions`,
      options,
    )
  }
}

/** The receiver refused the bearer token during the WebSocket upgrade. Terminal. */
export class SenderAuthError extends SfError {
  readonly status: number
  constructor(addr: string, status: number, body: string) {
    super(
      'SF_AUTH_REJECTED',
      `receiver ${addr} rejected authentication (HTTP ${status}${body ? `: ${body}` : ''}); set token= to the receiver's bearer token`,
    )
    this.status = status
  }
}

/** The receiver does not speak this sender's protocol version. Terminal. */
export class ProtocolVersionError extends SfError {
  constructor(addr: string, detail: string) {
    super(
      'SF_PROTOCOL_VERSION',
      `receiver ${addr} does not speak store-and-forward protocol this sender uses (${detail}); upgrade the older side`,
    )
  }
}

/** An error frame from the receiver. `HALT` stops the sender and is latched; `DROP` skipped one frame. */
export class SenderServerError extends SfError {
  readonly category: 'HALT' | 'DROP'
  readonly fsn: bigint
  constructor(category: 'HALT' | 'DROP', fsn: bigint, serverMessage: string) {
    super(
      'SF_SERVER_ERROR',
      category === 'HALT' && fsn === 0n
        ? `receiver refused the sender: ${serverMessage} (the unacked frames stay in the slot)`
        : category === 'HALT'
          ? `receiver halted the sender at FSN ${fsn}: ${serverMessage}; fix the cause on the receiver side, then restart the sender (the unacked frames stay in the slot)`
          : `receiver dropped frame FSN ${fsn}: ${serverMessage}; the frame is skipped, later frames continue`,
    )
    this.category = category
    this.fsn = fsn
  }
}

/** A record is larger than the receiver accepts in one frame. Terminal: the record can never be delivered. */
export class ReceiverFrameLimitError extends SfError {
  constructor(fsn: bigint, bytes: number, limit: number) {
    super(
      'SF_RECEIVER_FRAME_LIMIT',
      `record FSN ${fsn} needs a ${bytes}-byte frame but the receiver accepts at most ${limit} bytes; raise the receiver's maxFrameBytes or send smaller records`,
    )
  }
}

/**
 * `send` found the slot full (`SF_BACKPRESSURE`, as the slot's `SlotFullError`), or `sendBlocking` gave up
 * waiting for space (`SF_APPEND_DEADLINE`). `reason` and the message say whether the receiver is acking
 * slower than the producer sends, or unreachable (since when, which attempt).
 */
export class SenderBackpressureError extends SfError {
  readonly reason: 'server-slower' | 'reconnecting'
  constructor(
    code: 'SF_BACKPRESSURE' | 'SF_APPEND_DEADLINE',
    reason: 'server-slower' | 'reconnecting',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options)
    this.reason = reason
  }
}

/** `close()` gave up waiting for the receiver to acknowledge everything. */
export class SenderCloseTimeoutError extends SfError {
  readonly unacked: bigint
  constructor(timeoutMs: number, unacked: bigint, where: string) {
    super(
      'SF_CLOSE_TIMEOUT',
      `sender close timed out after ${timeoutMs} ms with ${unacked} frames unacknowledged; ${where}`,
    )
    this.unacked = unacked
  }
}

/** The sender was used after `close()`. */
export class SenderClosedError extends SfError {
  constructor() {
    super('SF_SENDER_CLOSED', 'the sender is closed; create a new sender to send more records')
  }
}

/**
 * A receiver refused a sender because its sender id belongs to another slot (see the receiver's slot
 * identity rules); reported to the receiver's `onError`, while the sender gets it as a HALT.
 */
export class SenderIdTakenError extends SfError {
  readonly senderId: string
  constructor(senderId: string, detail: string) {
    super(
      'SF_SENDER_ID_TAKEN',
      `sender id "${senderId}" ${detail}; records of two slots under one id would be taken for each other's. ` +
        "Give this application its own sender_id, or, if the other slot is gone for good, reset the receiving application's record of the id",
    )
    this.senderId = senderId
  }
}

/** Thrown by a receiver's `onFrames` to halt the sender (it latches a HALT error). */
export class HaltSenderError extends SfError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SF_HALT_REQUESTED', message, options)
  }
}

/** A connection to the receiver broke or could not be made. The sender retries; drainers give up eventually. */
export class ConnectionLostError extends SfError {
  constructor(addr: string, detail: string, options?: { cause?: unknown }) {
    super('SF_CONNECTION_LOST', `connection to receiver ${addr} lost: ${detail}`, options)
  }
}

/** A background drainer could not reach the receiver within its reconnect budget. */
export class ReconnectBudgetError extends SfError {
  constructor(addr: string, budgetMs: number, since: Date, options?: { cause?: unknown }) {
    super(
      'SF_RECONNECT_BUDGET_EXHAUSTED',
      `could not reconnect to receiver ${addr} since ${since.toISOString()} within the budget of ${budgetMs} ms ` +
        '(reconnect_max_duration_millis); fix the receiver or network, then delete the .failed file to retry',
      options,
    )
  }
}
