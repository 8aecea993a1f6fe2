/**
 * Files created once, whole or absent: written under a temporary name, fsync'd, then hard-linked
 * to the final name. link() refuses a name that exists, so the check and the creation are one
 * step and an existing file is never replaced; the directory is fsync'd so the new name survives
 * a power cut.
 */
import { link, open, rm } from 'node:fs/promises'
import path from 'node:path'
import { makeDirectory } from '@skippr/connector-api'
import { temporaryName } from './names.js'

/** Creates `file` with the chunks unless a file is there: then nothing changes and the answer is `exists`. */
export async function createWhole(
  file: string,
  chunks: readonly Uint8Array[],
): Promise<'created' | 'exists'> {
  const temp = path.join(path.dirname(file), temporaryName(path.basename(file)))
  try {
    await writeSynced(temp, chunks)
    try {
      await link(temp, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'exists'
      throw error
    }
  } finally {
    await rm(temp, { force: true })
  }
  await syncDir(path.dirname(file))
  return 'created'
}

/** Creates a new file (never an existing one) with the chunks, on disk when it returns. */
export async function writeSynced(file: string, chunks: readonly Uint8Array[]): Promise<void> {
  const handle = await open(file, 'wx')
  try {
    await handle.writev(chunks as Uint8Array[])
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Creates `dir` and any missing parent, and makes each new entry durable in its parent. */
export async function ensureDir(dir: string): Promise<void> {
  const created = await makeDirectory(dir)
  if (created === undefined) return
  for (let level = dir; ; level = path.dirname(level)) {
    await syncDir(path.dirname(level))
    if (level === created) return
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
