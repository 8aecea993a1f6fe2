// ---- the slot ----
export type { Durability, Slot, SlotFrame, SlotStats } from './base-slot.js'
// ---- the sender, the receiver and the wire protocol ----
export type { SenderCounters } from './counters.js'
export type { DrainerEvent } from './drainers.js'
export type { ErrorHandler } from './error-inbox.js'
export {
  AckOutOfRangeError,
  AppendDeadlineError,
  ConnectionLostError,
  CorruptFrameError,
  DiskFullError,
  FrameTooLargeError,
  HaltSenderError,
  ProtocolVersionError,
  ProtocolViolationError,
  ReceiverFrameLimitError,
  ReconnectBudgetError,
  SegmentGapError,
  SenderAuthError,
  SenderBackpressureError,
  SenderClosedError,
  SenderCloseTimeoutError,
  SenderConfigError,
  SenderServerError,
  SfError,
  SlotClosedError,
  SlotCorruptError,
  SlotFullError,
  SlotIoError,
  SlotLockedError,
  SlotLockLostError,
  SlotOptionError,
  WireFormatError,
} from './errors.js'
export type { OpenMode, SlotFile, SlotFs } from './io.js'
export { nodeFs } from './io.js'
export type { SlotLogger } from './logger.js'
export type { MemorySlotOptions } from './memory-slot.js'
export { openMemorySlot } from './memory-slot.js'
export { listOrphanSlots } from './orphans.js'
export type { FramesOutcome, ReceivedBatch, Receiver, ReceiverOptions } from './receiver.js'
export { createReceiver } from './receiver.js'
export type { DataLossRange } from './recovery.js'
export type { SenderHandlers } from './sender.js'
export { Sender } from './sender.js'
export type { SenderOptions, SfDurability } from './sender-config.js'
export { parseConnectString } from './sender-config.js'
export type { SlotOptions } from './slot.js'
export { FAILED_FILE, openSlot } from './slot.js'
export type { SlotSnapshot, SlotSnapshotOptions } from './snapshot.js'
export { openSlotSnapshot } from './snapshot.js'
export type { ErrorCategory, Frame } from './wire.js'
export { PROTOCOL_VERSION, SUBPROTOCOL } from './wire.js'
