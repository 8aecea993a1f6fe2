/**
 * Orphan scan: sibling slots under the same sfDir that a dead sender left with frames to deliver.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { parseSegmentFileName } from './format.js'
import { errorCode } from './io.js'
import { FAILED_FILE } from './slot.js'

/**
 * Sender ids of the slots in `sfDir`, other than `ownSenderId`, that hold at least one segment and no
 * `.failed` sentinel. Sorted by name. Busy slots are listed too: opening one fails with SF_SLOT_LOCKED.
 */
export async function listOrphanSlots(sfDir: string, ownSenderId: string): Promise<string[]> {
  const orphans: string[] = []
  for (const entry of await readdir(sfDir, { withFileTypes: true }).catch(ignoreMissing)) {
    if (!entry.isDirectory() || entry.name === ownSenderId) continue
    const names: string[] = await readdir(path.join(sfDir, entry.name)).catch(ignoreMissing)
    if (names.includes(FAILED_FILE)) continue
    if (names.some((n) => parseSegmentFileName(n) !== undefined)) orphans.push(entry.name)
  }
  return orphans.sort()
}

function ignoreMissing(e: unknown): never[] {
  if (errorCode(e) === 'ENOENT' || errorCode(e) === 'ENOTDIR') return []
  throw e
}
