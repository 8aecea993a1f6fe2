import path from 'node:path'
import type { StateBackend } from './backend.js'
import { UnknownStoreTypeError } from './errors.js'
import { pipelineOfKey, pipelinesPrefix, segment } from './keys.js'
import type { Lease } from './lease.js'
import { LmdbBackend } from './lmdb-backend.js'
import { PipelineState } from './pipeline.js'

export const STORE_TYPES = ['sled'] as const
export type StoreType = (typeof STORE_TYPES)[number]

export const DEFAULT_WORKSPACE = 'default'
/** The embedded store's directory under the data dir. */
export const STATE_DIR_NAME = 'state'

export interface OpenStateStoreOptions {
  /** `sled` (the default; the name the docs use for the embedded store). Anything else throws. */
  readonly type?: string | undefined
  /** DATA_DIR: the embedded store lives in `<dataDir>/state/`. */
  readonly dataDir: string
  readonly workspace?: string | undefined
}

/** Validates a `--store-type` / `SKIPPR_STORE_TYPE` value; UNKNOWN_STORE_TYPE if it is not one. */
export function parseStoreType(type: string | undefined): StoreType {
  const wanted = type ?? 'sled'
  const known = STORE_TYPES.find((t) => t === wanted)
  if (known === undefined) throw new UnknownStoreTypeError(wanted)
  return known
}

export async function openStateStore(options: OpenStateStoreOptions): Promise<StateStore> {
  parseStoreType(options.type)
  // Checked before opening, so a refusal leaves nothing open.
  const workspace = workspaceName(options.workspace)
  const backend = LmdbBackend.open(path.join(options.dataDir, STATE_DIR_NAME))
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

  /** Pipelines with saved state in this workspace (a lease taken counts), by name. */
  async listPipelines(): Promise<string[]> {
    const prefix = pipelinesPrefix(this.workspace)
    const names = new Set((await this.backend.list(prefix)).map((item) => pipelineOfKey(prefix, item.key)))
    return [...names].sort()
  }

  /** Stops lease heartbeats (without releasing) and closes the backend. */
  async close(): Promise<void> {
    for (const lease of [...this.leases]) lease.stopHeartbeats()
    await this.backend.close()
  }
}
