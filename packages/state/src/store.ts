import path from 'node:path'
import type { StateBackend } from './backend.js'
import { segment } from './keys.js'
import type { Lease } from './lease.js'
import { LmdbBackend } from './lmdb-backend.js'
import { PipelineState } from './pipeline.js'
import type { StateStoreType, StoreOpenOptions } from './store-type.js'

/** The embedded store (`sled`, the name the docs use): LMDB in `<dataDir>/state/`. */
export const embeddedStore: StateStoreType = {
  name: 'sled',
  async open(options) {
    return LmdbBackend.open(path.join(options.dataDir, STATE_DIR_NAME))
  },
}

export const DEFAULT_WORKSPACE = 'default'
/** The embedded store's directory under the data dir. */
export const STATE_DIR_NAME = 'state'

export interface OpenStateStoreOptions extends StoreOpenOptions {
  /** The kind of store; default the embedded one. */
  readonly type?: StateStoreType | undefined
  readonly workspace?: string | undefined
}

export async function openStateStore(options: OpenStateStoreOptions): Promise<StateStore> {
  // Checked before opening, so a refusal leaves nothing open.
  const workspace = workspaceName(options.workspace)
  const backend = await (options.type ?? embeddedStore).open(options)
  return new StateStore(backend, { workspace })
}

function workspaceName(workspace: string | undefined): string {
  const name = workspace ?? DEFAULT_WORKSPACE
  segment('workspace', name)
  return name
}

/** Saved state of one workspace, on any `StateBackend`. */
export class StateStore {
  readonly workspace: string
  readonly backend: StateBackend
  /** Leases with a heartbeat timer, stopped on close. */
  private readonly leases = new Set<Lease>()

  constructor(backend: StateBackend, options: { readonly workspace?: string | undefined } = {}) {
    this.backend = backend
    this.workspace = workspaceName(options.workspace)
  }

  pipeline(name: string): PipelineState {
    return new PipelineState(this.backend, this.workspace, name, this.leases)
  }

  /** Stops lease heartbeats (without releasing) and closes the backend. */
  async close(): Promise<void> {
    for (const lease of [...this.leases]) lease.stopHeartbeats()
    await this.backend.close()
  }
}
