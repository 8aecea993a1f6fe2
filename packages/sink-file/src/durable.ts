/**
 * Files that are either whole or absent: written under a temporary name, fsync'd, renamed over
 * the final name, and the directory fsync'd so the rename itself survives a power cut.
 */
import { open, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { isProcessAlive, makeDirectory } from '@skippr/connector-api'
import { tempFile, tempOwner } from './names.js'

export async function writeWhole(file: string, chunks: readonly Uint8Array[]): Promise<void> {
  const temp = tempFile(file)
  try {
    const handle = await open(temp, 'w')
    try {
      await handle.writev(chunks as Uint8Array[])
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, file)
  } catch (error) {
    await rm(temp, { force: true })
    throw error
  }
  await syncDir(path.dirname(file))
}

/** Creates `dir` if missing and makes its entry durable in the parent. */
export async function ensureDir(dir: string): Promise<void> {
  const created = await makeDirectory(dir)
  if (created !== undefined) await syncDir(path.dirname(dir))
}

/** Removes temporary files of processes that died (SIGKILL) before their rename. */
export async function removeOrphanTemps(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const pid = tempOwner(name)
    if (pid !== undefined && !isProcessAlive(pid)) await rm(path.join(dir, name), { force: true })
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
