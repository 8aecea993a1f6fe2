/**
 * Creating a directory and the ones above it. Node's `mkdir(dir, { recursive: true })` never returns
 * where mkdir answers ENOENT for a parent that exists (under /proc, where no entry can be made): it
 * takes the parent for missing, finds it there, and tries again, for ever, on a thread-pool thread
 * that no signal reaches. This walks up itself and gives up on the first level it cannot make.
 */
import { mkdir, stat } from 'node:fs/promises'
import path from 'node:path'

/** Makes `dir` and any missing parent; returns the first directory it created, or undefined. */
export async function makeDirectory(dir: string): Promise<string | undefined> {
  try {
    await mkdir(dir)
    return dir
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') {
      if ((await stat(dir)).isDirectory()) return undefined
      throw error
    }
    const parent = path.dirname(dir)
    if (code !== 'ENOENT' || parent === dir) throw error
    // The parent is missing, or cannot hold entries: make it, then try this level once more.
    const created = await makeDirectory(parent)
    await mkdir(dir)
    return created ?? dir
  }
}
