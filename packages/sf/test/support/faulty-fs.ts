import { nodeFs, type SlotFile, type SlotFs } from '../../src/io.js'
import { errno } from './sim-fs.js'

/**
 * The real file system with injected faults: `fault(op, file)` may return an error for any call, and
 * `maxWriteBytes` turns every write into a short write.
 */
export class FaultyFs implements SlotFs {
  fault:
    | ((op: string, file: string, write?: { position: number; length: number }) => Error | undefined)
    | undefined
  maxWriteBytes = Number.POSITIVE_INFINITY

  private check(op: string, file: string, write?: { position: number; length: number }): void {
    const e = this.fault?.(op, file, write)
    if (e) throw e
  }

  async open(file: string, mode: 'r' | 'r+' | 'w+'): Promise<SlotFile> {
    this.check('open', file)
    const f = await nodeFs.open(file, mode)
    return {
      write: async (buf, offset, length, position) => {
        this.check('write', file, { position, length })
        return f.write(buf, offset, Math.min(length, this.maxWriteBytes), position)
      },
      read: (buf, offset, length, position) => f.read(buf, offset, length, position),
      datasync: async () => {
        this.check('datasync', file)
        await f.datasync()
      },
      size: () => f.size(),
      close: () => f.close(),
    }
  }
  readdir = nodeFs.readdir
  mkdir = nodeFs.mkdir
  async rename(from: string, to: string): Promise<void> {
    this.check('rename', to)
    await nodeFs.rename(from, to)
  }
  unlink = nodeFs.unlink
  async syncDir(dir: string): Promise<void> {
    this.check('syncDir', dir)
    await nodeFs.syncDir(dir)
  }
}

export { errno }
