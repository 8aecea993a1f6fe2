/**
 * skipprd's programmatic API: load or build a config, run a pipeline, discover its schema, read
 * its rows (`df`, `query`) and check its set-up (`doctor`).
 *
 *   import { Config, Session } from 'skipprd'
 *   const session = new Session(Config.discover().getPipeline('bikehire'))
 *   await session.sync({ once: true })
 */

export { hasCode } from '@skippr/connector-api'
export type {
  ConnectorFields,
  DiscoverConfigOptions,
  EntryRef,
  PipelineOptions,
  PipelineRef,
} from './api/config.js'
export { Config, EnvRef, Pipeline } from './api/config.js'
export type {
  DoctorReport,
  QueryResult,
  Rows,
  SessionOptions,
  SyncOptions,
  SyncResult,
} from './api/session.js'
export { discover, Session } from './api/session.js'
export type { Env } from './config/interpolate.js'
export type { ConfigFile } from './config/load.js'
export type { PipelineSettings, RuntimeFlags } from './config/settings.js'
export { packageName } from './connectors.js'
export type { Check } from './doctor/check.js'
export {
  BATCH_REJECTED,
  BatchRejectedError,
  CONFIG_NOT_FOUND,
  CONNECTOR_MISSING,
  ConfigNotFoundError,
  ConnectorMissingError,
  ENV_NOT_SET,
  EnvNotSetError,
  INTERRUPTED,
  InterruptedError,
  LANDING_INCOMPLETE,
  LandingIncompleteError,
  PIPELINE_NOT_FOUND,
  PipelineNotFoundError,
  SOURCE_FAILED,
  SourceFailedError,
  WAL_STORAGE_INVALID,
  WAL_STORAGE_REFUSES_SINK,
  WAL_STORAGE_UNAVAILABLE,
  WalStorageInvalidError,
  WalStorageRefusesSinkError,
  WalStorageUnavailableError,
} from './errors.js'
export type { Cell } from './query/result.js'
export type { DiscoverEvent } from './runner/discover.js'
export type { NamespaceCounters, Phase, SyncEvent, SyncListener } from './runner/events.js'
export { RunProgress } from './runner/events.js'
