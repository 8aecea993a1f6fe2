export type {
  BackendOptions,
  SnapshotSourceOptions,
  WalBackend,
  WalBackendType,
  WalFrame,
  WalLogSnapshot,
  WalMeta,
  WalSnapshotSource,
} from './backend.js'
export type { BatchBufferOptions, BufferChunk } from './buffer.js'
export { BatchBuffer } from './buffer.js'
export { diskWal, removeDiskReserve, slotName } from './disk.js'
export {
  WalBatchInvalidError,
  WalClosedError,
  WalConfigError,
  WalCorruptError,
  WalDiskFullError,
  WalError,
  WalFormatUnsupportedError,
  WalFullError,
  WalLandOrderError,
} from './errors.js'
export { FORMAT_VERSION } from './frame.js'
export type { WalSettings, WalSettingsInput, WalStorage } from './settings.js'
export { resolveWalSettings, WAL_STORAGES } from './settings.js'
export type { WalSnapshot, WalSnapshotOptions } from './snapshot-reader.js'
export { openWalSnapshot } from './snapshot-reader.js'
export type {
  BatchIdentity,
  BatchInput,
  BatchPart,
  JsonValue,
  Offset,
  PartInput,
  RecordFormat,
  ResumePositions,
  WalBatch,
} from './types.js'
export type { CommitOptions, WalLogger, WalOptions } from './wal.js'
export { openWal, Wal } from './wal.js'
