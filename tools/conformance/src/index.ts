export type { Canonical } from './canonical.js'
export { canonicalRows, canonicalValue } from './canonical.js'
export { writeCrashBatches } from './crash.js'
export { parseCsvWithHeader } from './csv.js'
export { decodeRows } from './decode.js'
export type { BatchSpec, PartSpec, Row } from './fixtures.js'
export { ALL_TYPES_FIELDS, allTypesSchema, makeBatch, makePart, rawPart, trickyRows } from './fixtures.js'
export type { SinkHarness } from './harness.js'
export { fileRows, objectRows } from './object-rows.js'
export type { ObjectStoreHarness } from './object-store.js'
export { objectStoreSuite } from './object-store.js'
export type { PartitionHarness } from './partition.js'
export { PARTITION_TEMPLATE, partitionedBatch, partitionSuite } from './partition.js'
export type { StateBackendHarness } from './state-backend.js'
export { stateBackendSuite } from './state-backend.js'
export {
  atLeastOnceSuite,
  exactlyOnceSuite,
  landingSuite,
  overwriteOnRetrySuite,
  renameColumnSuite,
} from './suites.js'
export type { WalBackendHarness } from './wal-backend.js'
export { walBackendSuite } from './wal-backend.js'
