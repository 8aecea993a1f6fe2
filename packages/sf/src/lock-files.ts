/**
 * The lock's access to its own files (lock.ts): owner.json and the takeover markers. The default,
 * `nodeLockFiles`, makes ordinary promise-based fs calls, so a heartbeat shares libuv's thread pool with
 * the slot's writes and syncs: a disk that stalls those makes the heartbeat late too, and lock.ts renews
 * a late heartbeat when nobody took the slot over meanwhile. A thread of its own would spare the
 * heartbeat that wait, but costs every process an isolate's memory and start-up time.
 * Tests pass their own (test/support/faulty-fs.ts) to stall the lock's calls with the slot's.
 *
 * Invariant: `replace` renames a complete file over the old one, so a reader sees the old or the new bytes.
 */
import * as fsp from 'node:fs/promises'
import { errorCode } from './io.js'

export interface LockFiles {
  /** The file's bytes; undefined when it does not exist. */
  read(file: string): Promise<Buffer | undefined>
  /** Writes `data` to `tmp`, then renames it over `file`, so a reader sees the old or the new bytes. */
  replace(file: string, tmp: string, data: Uint8Array): Promise<void>
  /** Names in a directory. */
  list(dir: string): Promise<string[]>
}

export const nodeLockFiles: LockFiles = {
  async read(file) {
    try {
      return await fsp.readFile(file)
    } catch (e) {
      if (errorCode(e) === 'ENOENT') return undefined
      throw e
    }
  },
  async replace(file, tmp, data) {
    await fsp.writeFile(tmp, data)
    await fsp.rename(tmp, file)
  },
  list: (dir) => fsp.readdir(dir),
}
