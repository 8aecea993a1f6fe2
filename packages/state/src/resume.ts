import type { StateBackend } from './backend.js'
import { StaleFenceError } from './errors.js'
import type { JsonValue } from './json.js'
import { updateKey } from './update.js'

/**
 * The resume position, with the newest fencing token that wrote or claimed it. The token check
 * and the write are one conditional put on this key, so once a writer has claimed the key no
 * older token's write can land, whatever the timing.
 */
type ResumeRecord = { readonly offset?: JsonValue; readonly fence?: string }

export async function readResumeOffset(backend: StateBackend, key: string): Promise<JsonValue | undefined> {
  const entry = await backend.get(key)
  return (entry?.value as ResumeRecord | undefined)?.offset
}

/**
 * Replaces the offset with `change(previous)` (`undefined` forgets it) and raises the stored
 * fence to `fence`. Refuses with STALE_FENCE when a newer token has written or claimed the key.
 */
export async function updateResumeOffset(
  backend: StateBackend,
  key: string,
  pipeline: string,
  change: (previous: JsonValue | undefined) => JsonValue | undefined,
  fence: bigint | undefined,
): Promise<void> {
  await updateKey(backend, key, (current) => {
    const record = (current?.value ?? {}) as ResumeRecord
    const stored = record.fence === undefined ? undefined : BigInt(record.fence)
    if (fence !== undefined && stored !== undefined && stored > fence) {
      throw new StaleFenceError(pipeline, fence, `token ${stored} has written the resume position since`)
    }
    const newest = stored === undefined || (fence !== undefined && fence > stored) ? fence : stored
    const offset = change(record.offset)
    const write: ResumeRecord = {
      ...(offset === undefined ? {} : { offset }),
      ...(newest === undefined ? {} : { fence: newest.toString() }),
    }
    return { write, result: undefined }
  })
}
