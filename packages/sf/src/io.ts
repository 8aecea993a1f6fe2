/**
 * The slot's only door to the file system. Everything the slot writes or reads goes through `SlotFs`, so
 * tests can inject faults (ENOSPC, short writes, failing syncs, stalls) and crash a simulated disk, the
 * way Vector's disk buffer isolates its `io` module. The lock's own files go through `lockFiles`
 * (lock-files.ts), on the same thread pool as the slot's calls.
 */
import { constants } from 'node:fs'
import * as fsp from 'node:fs/promises'
import path from 'node:path'
import type { LockFiles } from './lock-files.js'

export interface SlotFile {
  /** Positional write; may write fewer bytes than asked (use writeFully). */
  write(buf: Uint8Array, offset: number, length: number, position: number): Promise<number>
  /**
   * Positional vectored write of `buffers` back to back, at most IOV_MAX of them; returns the bytes
   * written, which may be fewer than asked (use writevFully).
   */
  writev(buffers: readonly Uint8Array[], position: number): Promise<number>
  /** Positional read; returns 0 at end of file. */
  read(buf: Uint8Array, offset: number, length: number, position: number): Promise<number>
  /** fdatasync: the written data (and the size if it changed) is durable. */
  datasync(): Promise<void>
  size(): Promise<number>
  close(): Promise<void>
}

/** 'r' read only; 'r+' read/write an existing file; 'w+' create or truncate, read/write. */
export type OpenMode = 'r' | 'r+' | 'w+'

export interface SlotFs {
  open(file: string, mode: OpenMode): Promise<SlotFile>
  /** Names in a directory; [] when it does not exist. */
  readdir(dir: string): Promise<string[]>
  mkdir(dir: string): Promise<void>
  rename(from: string, to: string): Promise<void>
  /** Removes a file; no error when it is already gone. */
  unlink(file: string): Promise<void>
  /** fsync of a directory: makes creates, renames and unlinks in it durable. */
  syncDir(dir: string): Promise<void>
  /** The lock's owner record and markers (lock.ts); default: plain fs calls (lock-files.ts). */
  lockFiles?: LockFiles
}

class NodeFile implements SlotFile {
  constructor(private readonly handle: fsp.FileHandle) {}
  async write(buf: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return (await this.handle.write(buf, offset, length, position)).bytesWritten
  }
  async writev(buffers: readonly Uint8Array[], position: number): Promise<number> {
    return (await this.handle.writev(buffers as Uint8Array[], position)).bytesWritten
  }
  async read(buf: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return (await this.handle.read(buf, offset, length, position)).bytesRead
  }
  datasync(): Promise<void> {
    return this.handle.datasync()
  }
  async size(): Promise<number> {
    return (await this.handle.stat()).size
  }
  close(): Promise<void> {
    return this.handle.close()
  }
}

/** The real file system. */
export const nodeFs: SlotFs = {
  async open(file, mode) {
    return new NodeFile(await fsp.open(file, mode))
  },
  async readdir(dir) {
    try {
      return await fsp.readdir(dir)
    } catch (e) {
      if (errorCode(e) === 'ENOENT') return []
      throw e
    }
  },
  async mkdir(dir) {
    await fsp.mkdir(dir, { recursive: true })
  },
  rename: fsp.rename,
  async unlink(file) {
    try {
      await fsp.unlink(file)
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') throw e
    }
  },
  async syncDir(dir) {
    const handle = await fsp.open(dir, constants.O_RDONLY | constants.O_DIRECTORY)
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  },
}

export function errorCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code
}

/** Writes all `length` bytes, continuing after short writes. */
export async function writeFully(
  file: SlotFile,
  buf: Uint8Array,
  offset: number,
  length: number,
  position: number,
): Promise<void> {
  let done = 0
  while (done < length) {
    const n = await file.write(buf, offset + done, length - done, position + done)
    if (n <= 0) throw new Error(`write made no progress at file position ${position + done}`)
    done += n
  }
}

/** The most buffers one `writev` takes (POSIX IOV_MAX on Linux and macOS). */
export const IOV_MAX = 1024

/**
 * Writes `buffers` back to back from `position`, in calls of at most IOV_MAX buffers, continuing after
 * short writes (which may end inside any buffer).
 */
export async function writevFully(
  file: SlotFile,
  buffers: readonly Uint8Array[],
  position: number,
): Promise<void> {
  let next = 0
  /** Bytes of buffers[next] already written. */
  let done = 0
  const skipWritten = (): void => {
    while (next < buffers.length && done >= buffers[next]!.length) done -= buffers[next++]!.length
  }
  skipWritten()
  while (next < buffers.length) {
    const chunk = buffers.slice(next, next + IOV_MAX)
    chunk[0] = chunk[0]!.subarray(done)
    const n = await file.writev(chunk, position)
    if (n <= 0) throw new Error(`write made no progress at file position ${position}`)
    position += n
    done += n
    skipWritten()
  }
}

/** Reads up to `length` bytes, continuing after short reads; fewer only at end of file. */
export async function readFully(
  file: SlotFile,
  buf: Uint8Array,
  offset: number,
  length: number,
  position: number,
): Promise<number> {
  let done = 0
  while (done < length) {
    const n = await file.read(buf, offset + done, length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

/** Reads a whole (small) file; undefined when it does not exist. */
export async function readSmallFile(io: SlotFs, file: string): Promise<Buffer | undefined> {
  let f: SlotFile
  try {
    f = await io.open(file, 'r')
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return undefined
    throw e
  }
  try {
    const size = await f.size()
    const buf = Buffer.alloc(size)
    const n = await readFully(f, buf, 0, size, 0)
    return buf.subarray(0, n)
  } finally {
    await f.close()
  }
}

/**
 * Replaces `dir/name` with `data` so that a crash leaves either the old or the new content, never a mix:
 * write a temporary file, fdatasync it, rename it over the target, fsync the directory.
 */
export async function replaceFileDurably(
  io: SlotFs,
  dir: string,
  name: string,
  data: Uint8Array,
): Promise<void> {
  const tmp = path.join(dir, `${name}.tmp`)
  const f = await io.open(tmp, 'w+')
  try {
    await writeFully(f, data, 0, data.length, 0)
    await f.datasync()
  } finally {
    await f.close()
  }
  await io.rename(tmp, path.join(dir, name))
  await io.syncDir(dir)
}
