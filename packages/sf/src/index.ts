/** `@skippr/sf`: the sender, the receiver, the wire protocol, and the slot (also `@skippr/sf/slot`). */

export type { DrainerEvent } from './drainers.js'
export type { ErrorHandler } from './error-inbox.js'
export {
  AppendDeadlineError,
  ConnectionLostError,
  HaltSenderError,
  ProtocolVersionError,
  ProtocolViolationError,
  ReceiverFrameLimitError,
  ReconnectBudgetError,
  SenderAuthError,
  SenderBackpressureError,
  SenderClosedError,
  SenderCloseTimeoutError,
  SenderConfigError,
  SenderIdTakenError,
  SenderServerError,
  WireFormatError,
} from './errors.js'
export type { MetricLabels, MetricView } from './metrics.js'
export { senderMetrics } from './metrics.js'
export { listOrphanSlots } from './orphans.js'
export type {
  DeliveredPosition,
  FramesOutcome,
  ReceivedBatch,
  Receiver,
  ReceiverAttachOptions,
  ReceiverBaseOptions,
  ReceiverListenOptions,
  ReceiverOptions,
} from './receiver.js'
export { createReceiver } from './receiver.js'
export type { ReceiverCounters } from './receiver-counters.js'
export type { SenderHandlers } from './sender.js'
export { Sender } from './sender.js'
export type { SenderOptions, SfDurability } from './sender-config.js'
export { parseConnectString } from './sender-config.js'
export type { SenderCounters } from './sender-counters.js'
export type {
  DataLossRange,
  Durability,
  LockFiles,
  MemorySlotOptions,
  OpenMode,
  Payload,
  Preallocate,
  Slot,
  SlotFile,
  SlotFrame,
  SlotFs,
  SlotLogger,
  SlotOptions,
  SlotSnapshot,
  SlotSnapshotOptions,
  SlotStats,
} from './slot-index.js'
export {
  AckOutOfRangeError,
  CorruptFrameError,
  DiskFullError,
  FAILED_FILE,
  FrameTooLargeError,
  nodeFs,
  openMemorySlot,
  openSlot,
  openSlotSnapshot,
  SegmentGapError,
  SfError,
  SlotClosedError,
  SlotCorruptError,
  SlotFullError,
  SlotIoError,
  SlotLockedError,
  SlotLockLostError,
  SlotOptionError,
} from './slot-index.js'
export type { ErrorCategory, Frame } from './wire.js'
export { PROTOCOL_VERSION, SUBPROTOCOL, SUBPROTOCOLS } from './wire.js'
