import type { StateBackend, StateEntry } from './backend.js'
import { WriteConflictError } from './errors.js'
import type { JsonValue } from './json.js'

const MAX_ATTEMPTS = 100

/** What to do with a key given its current entry: maybe write a new value, and what to return. */
export interface Decision<R> {
  readonly write?: JsonValue
  readonly result: R
}

/**
 * Read-modify-write of one key by optimistic concurrency: `decide` sees the current entry, and
 * runs again on the fresh entry whenever another writer changed the key first. `decide` may throw
 * to refuse.
 */
export async function updateKey<R>(
  backend: StateBackend,
  key: string,
  decide: (current: StateEntry | undefined) => Decision<R>,
): Promise<R> {
  let current = await backend.get(key)
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const { write, result } = decide(current)
    if (write === undefined) return result
    const condition = current ? { expectedVersion: current.version } : { mustNotExist: true as const }
    const put = await backend.put(key, write, condition)
    if (put.ok) return result
    current = put.current
  }
  throw new WriteConflictError(key, MAX_ATTEMPTS)
}
