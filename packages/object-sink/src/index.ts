export { sha256 } from './checksum.js'
export type { ObjectSinkConfig } from './config.js'
export { normalizePrefix, objectSinkFields, objectSinkOptions, underPrefix } from './config.js'
export {
  OBJECT_CONFLICT,
  ObjectConflictError,
  PARTITION_FIELD_MISSING,
  PartitionFieldError,
} from './errors.js'
export type { Partition } from './layout.js'
export { isPipelineKey, MANIFESTS, manifestKey, objectKey } from './layout.js'
export type { ManifestEntry } from './manifest.js'
export type { ObjectSinkOptions } from './object-sink.js'
export { ObjectSink } from './object-sink.js'
export type { PartitionTemplate } from './partition-template.js'
export {
  DEFAULT_PARTITION,
  PartitionTemplateError,
  parsePartitionTemplate,
  partitionValue,
} from './partition-template.js'
export type { CreateResult, ObjectInfo, ObjectStore, StoredObject } from './store.js'
