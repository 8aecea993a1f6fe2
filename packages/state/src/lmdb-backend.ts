import { createRequire } from 'node:module'
import path from 'node:path'
import { makeDirectorySync } from '@skippr/connector-api'
import type { RootDatabase } from 'lmdb'
import type { PutCondition, PutResult, StateBackend, StateEntry, StateItem } from './backend.js'
import { StateOpenError } from './errors.js'
import type { JsonValue } from './json.js'

const FILE_NAME = 'state.mdb'

/**
 * lmdb through its CommonJS build, one bundled file: its ES module build is some twenty files that
 * Node resolves and links one by one, about 10 ms more of every sync's start (22 against 33 ms).
 */
const { open } = createRequire(import.meta.url)('lmdb') as typeof import('lmdb')

/**
 * The embedded store: one LMDB environment (`state.mdb` + `state.mdb-lock`) in a directory.
 * LMDB gives what the contract needs: copy-on-write pages with a meta-page switch (a killed
 * writer leaves the previous or the new value), one writer lock shared by every process, and
 * readers that never block writers. Every write is a transaction whose promise resolves once it is
 * on disk: state writes are few and each must be durable before the caller moves on. The callback
 * runs on the event loop when LMDB's writer lock is taken, and the commit and its fsync on LMDB's
 * writer thread, so a sync's event loop does not stop for them (about 60 ms over a 1M-row sync, two
 * state writes per batch, while synchronous transactions did).
 */
export class LmdbBackend implements StateBackend {
  private readonly db: RootDatabase<StateEntry, string>

  private constructor(db: RootDatabase<StateEntry, string>) {
    this.db = db
  }

  static open(dir: string): LmdbBackend {
    try {
      makeDirectorySync(dir)
      const db = open<StateEntry, string>({
        path: path.join(dir, FILE_NAME),
        encoding: 'json',
        // Commit returns only after the data is on disk, not merely visible.
        overlappingSync: false,
        cache: false,
      })
      return new LmdbBackend(db)
    } catch (error) {
      throw new StateOpenError(dir, error)
    }
  }

  async get(key: string): Promise<StateEntry | undefined> {
    // lmdb-js reuses a read snapshot within an event turn; another process may have written since.
    this.db.resetReadTxn()
    return this.db.get(key)
  }

  async put(key: string, value: JsonValue, condition?: PutCondition): Promise<PutResult> {
    // The check and the write share one write transaction, which holds LMDB's cross-process writer lock.
    return this.db.transaction((): PutResult => {
      const current = this.db.get(key)
      if (!meets(current, condition)) return { ok: false, current }
      const version = (current?.version ?? 0) + 1
      this.db.putSync(key, { version, value })
      return { ok: true, version }
    })
  }

  async delete(key: string): Promise<boolean> {
    return this.db.transaction(() => this.db.removeSync(key))
  }

  async list(prefix: string): Promise<StateItem[]> {
    this.db.resetReadTxn()
    const items: StateItem[] = []
    for (const { key, value } of this.db.getRange({ start: prefix })) {
      if (!key.startsWith(prefix)) break
      items.push({ key, version: value.version, value: value.value })
    }
    return items
  }

  async close(): Promise<void> {
    await this.db.close()
  }
}

function meets(current: StateEntry | undefined, condition: PutCondition | undefined): boolean {
  if (condition === undefined) return true
  if ('mustNotExist' in condition) return current === undefined
  return current?.version === condition.expectedVersion
}
