/**
 * The state store a pipeline keeps its positions and lease in (`skippr.store.type`, `--store-type`,
 * `SKIPPR_STORE_TYPE`): the embedded one, or one in its own package that the user installs beside
 * skippr.yml, as a connector, and that is loaded only when asked for.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import {
  embeddedStore,
  openStateStore,
  STATE_DIR_NAME,
  type StateStore,
  type StateStoreType,
  UnknownStoreTypeError,
} from '@skippr/state'
import type { PipelineSettings, StoreSettings } from '../config/settings.js'
import { ConnectorMissingError } from '../errors.js'
import { importPackage } from '../installed-package.js'

/** Each store type and where it comes from: this package, or the package that exports `stateStore`. */
const STORE_TYPES: Readonly<Record<string, StateStoreType | string>> = {
  sled: embeddedStore,
  dynamodb: '@skippr/state-dynamodb',
}

/** Refuses, before anything opens, a store type skipprd does not know. */
export function checkStoreType(store: StoreSettings): void {
  if (!Object.hasOwn(STORE_TYPES, store.type))
    throw new UnknownStoreTypeError(store.type, Object.keys(STORE_TYPES))
}

async function loadStoreType(store: StoreSettings): Promise<StateStoreType> {
  checkStoreType(store)
  const known = STORE_TYPES[store.type] as StateStoreType | string
  if (typeof known !== 'string') return known
  const module = (await importPackage(known, store.packageDir)) as { stateStore?: StateStoreType } | undefined
  if (module === undefined)
    throw new ConnectorMissingError('skippr.store', `state store type ${store.type}`, known)
  if (module.stateStore?.name !== store.type)
    throw new ConfigError(`${known} does not export the ${store.type} state store: reinstall it`)
  return module.stateStore
}

/**
 * True when the embedded store was never created in the pipeline's data dir: the pipeline never
 * ran on this host, and opening the store would create it. A store that is a service may hold
 * state from any host, so it is never ruled out this way.
 */
export function neverRanHere(settings: PipelineSettings): boolean {
  return (
    settings.store.type === embeddedStore.name && !existsSync(path.join(settings.dataDir, STATE_DIR_NAME))
  )
}

/** The pipeline's state store, opened. */
export async function openPipelineStore(settings: PipelineSettings): Promise<StateStore> {
  const { store } = settings
  return openStateStore({
    type: await loadStoreType(store),
    dataDir: settings.dataDir,
    workspace: settings.workspace,
    name: store.name,
    endpoint: store.endpoint,
    create: store.create,
  })
}
