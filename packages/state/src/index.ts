export type { PutCondition, PutResult, StateBackend, StateEntry, StateItem } from './backend.js'
export { CountersBuffer, type CountersBufferOptions } from './counters-buffer.js'
export {
  hasCode,
  INVALID_STATE_NAME,
  InvalidStateNameError,
  LEASE_LOST,
  LEASE_UNAVAILABLE,
  type LeaseHolder,
  LeaseLostError,
  LeaseUnavailableError,
  STALE_FENCE,
  STATE_OPEN_FAILED,
  STATE_WRITE_CONFLICT,
  StaleFenceError,
  StateError,
  StateOpenError,
  UNKNOWN_STORE_TYPE,
  UnknownStoreTypeError,
  WriteConflictError,
} from './errors.js'
export type { JsonValue } from './json.js'
export type { FailedBatch, LandingFailure, LandingFailures } from './landing-failures.js'
export {
  type AcquireLeaseOptions,
  DEFAULT_TTL_MS,
  DEFAULT_WAIT_MS,
  type Lease,
  type LeaseClock,
  type LeaseInfo,
  type LeaseWatch,
  systemClock,
} from './lease.js'
export { LmdbBackend } from './lmdb-backend.js'
export { isLocalOwnerGone, localOwnerId } from './owner.js'
export { joinStateKey, type KeyParts, splitStateKey } from './partition.js'
export type { FenceOptions, PipelineState, VersionedRecord } from './pipeline.js'
export type {
  CountedBatch,
  CountedEntry,
  CountedPart,
  NamespaceCounts,
  PartCount,
  PipelineCounters,
} from './pipeline-counters.js'
export type { SavedSchema } from './schemas.js'
export {
  DEFAULT_WORKSPACE,
  embeddedStore,
  type OpenStateStoreOptions,
  openStateStore,
  STATE_DIR_NAME,
  StateStore,
} from './store.js'
export type { StateStoreType, StoreOpenOptions } from './store-type.js'
