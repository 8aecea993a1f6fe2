import { IOV_MAX, nodeFs, type SlotFile, type SlotFs } from '../../src/io.js'
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
 */
export class FaultyFs implements SlotFs {
  fault: ((op: string, file: string, write?: WriteCall) => Error | undefined) | undefined
  maxWriteBytes = Number.POSITIVE_INFINITY

  private check(op: string, file: string, write?: WriteCall): void {
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
      writev: async (buffers, position) => {
        const length = buffers.reduce((sum, b) => sum + b.length, 0)
        this.check('writev', file, { position, length, buffers })
        if (buffers.length > IOV_MAX) throw errno('EINVAL')
        return f.writev(prefixOf(buffers, this.maxWriteBytes), position)
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
