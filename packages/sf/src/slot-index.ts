/**
 * `@skippr/sf/slot`: the durable slot alone, for programs that keep frames on disk without forwarding
 * them over the network (the skipprd WAL). Importing it does not load the sender, the receiver or `ws`,
 * which makes start-up of such a program measurably shorter. The main entry re-exports all of it.
 */
export type { Durability, Payload, Preallocate, Slot, SlotFrame, SlotStats } from './base-slot.js'
export {
  AckOutOfRangeError,
  CorruptFrameError,
  DiskFullError,
  FrameTooLargeError,
  SegmentGapError,
  SfError,
  SlotClosedError,
  SlotCorruptError,
  SlotFullError,
  SlotIoError,
  SlotLockedError,
  SlotLockLostError,
  SlotOptionError,
} from './errors.js'
export type { OpenMode, SlotFile, SlotFs } from './io.js'
export { nodeFs } from './io.js'
export type { LockFiles } from './lock-files.js'
export type { SlotLogger } from './logger.js'
export type { MemorySlotOptions } from './memory-slot.js'
export { openMemorySlot } from './memory-slot.js'
export type { DataLossRange } from './recovery.js'
export type { SlotOptions } from './slot.js'
export { FAILED_FILE, openSlot } from './slot.js'
export type { SlotSnapshot, SlotSnapshotOptions } from './snapshot.js'
export { openSlotSnapshot } from './snapshot.js'
