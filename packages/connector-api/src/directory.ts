/**
 * Creating a directory and the ones above it. Node's `mkdir(dir, { recursive: true })` (and
 * `mkdirSync`) never returns where mkdir answers ENOENT for a parent that exists (under /proc,
 * where no entry can be made): it takes the parent for missing, finds it there, and tries again,
 * for ever, on a thread that no signal reaches. This walks up itself and gives up on the first
 * level it cannot make. The walk is synchronous (a mkdir per missing level, done once when a
 * directory is first needed) so the async and sync callers share one implementation.
 */
import { mkdirSync, statSync } from 'node:fs'
import path from 'node:path'

/** Makes `dir` and any missing parent; returns the first directory it created, or undefined. */
export function makeDirectorySync(dir: string): string | undefined {
  try {
    mkdirSync(dir)
    return dir
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') {
      if (statSync(dir).isDirectory()) return undefined
      throw error
    }
    const parent = path.dirname(dir)
    if (code !== 'ENOENT' || parent === dir) throw error
    // The parent is missing, or cannot hold entries: make it, then try this level once more.
    const created = makeDirectorySync(parent)
    mkdirSync(dir)
    return created ?? dir
  }
}

/** `makeDirectorySync` for async callers: a rejected promise instead of a throw. */
export async function makeDirectory(dir: string): Promise<string | undefined> {
  return makeDirectorySync(dir)
}
