import type { StateBackend } from './backend.js'

/**
 * A kind of state store, chosen by `--store-type` / `SKIPPR_STORE_TYPE`: how to open its backend.
 * The embedded store (`sled`) is in this package; a store that needs a service and its SDK lives in
 * its own package (`@skippr/state-dynamodb`) so that only its users install the SDK.
 */
export interface StateStoreType {
  /** The `--store-type` value. */
  readonly name: string
  open(options: StoreOpenOptions): Promise<StateBackend>
}

export interface StoreOpenOptions {
  /** DATA_DIR, for a store that keeps its files on this host. */
  readonly dataDir: string
  /** `--store-name` / `SKIPPR_STORE_NAME`: the table of a store that is a service. */
  readonly name?: string | undefined
  /** `skippr.store.endpoint`: the service's address, when it is not the provider's default. */
  readonly endpoint?: string | undefined
  /** `--create-store`: create the table when it is missing, instead of refusing to start. */
  readonly create?: boolean | undefined
  /** `--tenant`: the first part of every key in a store shared by tenants. Default `default`. */
  readonly tenant?: string | undefined
}
