import { IOV_MAX, nodeFs, type SlotFile, type SlotFs } from '../../src/io.js'
import { type LockFiles, nodeLockFiles } from '../../src/lock-files.js'
import { errno, prefixOf } from './sim-fs.js'

/** What a write or writev was asked to write (`buffers`: a writev's buffers). */
export interface WriteCall {
  position: number
  length: number
  buffers?: readonly Uint8Array[]
}

/**
 * The real file system with injected faults: `fault(op, file, write)` may return an error for any call
 * (tests also use it to watch what is written), and `maxWriteBytes` turns every write and writev into a
 * short write. A writev of more than IOV_MAX buffers fails with EINVAL, as the system call does.
 * `stall()` makes the disk stop answering, for the slot's calls and the lock's alike (they share the
 * thread pool, lock-files.ts), until the function it returns is called.
 */
export class FaultyFs implements SlotFs {
  fault: ((op: string, file: string, write?: WriteCall) => Error | undefined) | undefined
  maxWriteBytes = Number.POSITIVE_INFINITY
  private stalled: Promise<void> | undefined

  /** The lock's calls, held while a stall lasts. */
  readonly lockFiles: LockFiles = {
    read: async (file) => {
      await this.stalled
      return nodeLockFiles.read(file)
    },
    replace: async (file, tmp, data) => {
      await this.stalled
      return nodeLockFiles.replace(file, tmp, data)
    },
    list: async (dir) => {
      await this.stalled
      return nodeLockFiles.list(dir)
    },
  }

  /**
   * The disk stops answering: every call made meanwhile, the slot's and the lock's, waits for the end of
   * the stall (the returned function), as calls stuck on a stalled disk hold the thread pool.
   */
  stall(): () => void {
    let end = (): void => {}
    this.stalled = new Promise<void>((resolve) => (end = resolve))
    return () => {
      this.stalled = undefined
      end()
    }
  }

  /** Waits out a stall, then applies `fault`. */
  private async check(op: string, file: string, write?: WriteCall): Promise<void> {
    await this.stalled
    const e = this.fault?.(op, file, write)
    if (e) throw e
  }

  async open(file: string, mode: 'r' | 'r+' | 'w+'): Promise<SlotFile> {
    await this.check('open', file)
    const f = await nodeFs.open(file, mode)
    return {
      write: async (buf, offset, length, position) => {
        await this.check('write', file, { position, length })
        return f.write(buf, offset, Math.min(length, this.maxWriteBytes), position)
      },
      writev: async (buffers, position) => {
        const length = buffers.reduce((sum, b) => sum + b.length, 0)
        await this.check('writev', file, { position, length, buffers })
        if (buffers.length > IOV_MAX) throw errno('EINVAL')
        return f.writev(prefixOf(buffers, this.maxWriteBytes), position)
      },
      read: async (buf, offset, length, position) => {
        await this.stalled
        return f.read(buf, offset, length, position)
      },
      datasync: async () => {
        await this.check('datasync', file)
        await f.datasync()
      },
      size: async () => {
        await this.stalled
        return f.size()
      },
      close: async () => {
        await this.stalled
        await f.close()
      },
    }
  }
  async readdir(dir: string): Promise<string[]> {
    await this.stalled
    return nodeFs.readdir(dir)
  }
  async mkdir(dir: string): Promise<void> {
    await this.stalled
    await nodeFs.mkdir(dir)
  }
  async rename(from: string, to: string): Promise<void> {
    await this.check('rename', to)
    await nodeFs.rename(from, to)
  }
  async unlink(file: string): Promise<void> {
    await this.check('unlink', file)
    await nodeFs.unlink(file)
  }
  async syncDir(dir: string): Promise<void> {
    await this.check('syncDir', dir)
    await nodeFs.syncDir(dir)
  }
}

export { errno }
