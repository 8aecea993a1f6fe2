/**
 * A new DuckDB database file appears whole or not at all. DuckDB creates the file and then writes
 * its headers, so a process killed in between (a SIGKILL while a first sync opens its warehouse)
 * left a file DuckDB refuses for ever: "exists, but it is not a valid DuckDB database file". The
 * file is made under a temporary name, synced, and linked into place, which fails rather than
 * replace a file another process made meanwhile. Temporary files of processes that died are removed,
 * and so is an empty file at the final name (what such a kill left before): it holds nothing.
 */
import { link, open, readdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { isProcessAlive } from '@skippr/connector-api'
import { duckdbApi } from './duckdb.js'

const CREATING = '.creating-'

export async function createDatabaseFile(file: string): Promise<void> {
  await removeDeadCreations(file)
  const size = await sizeOf(file)
  if (size !== undefined && size > 0) return
  if (size === 0) await rm(file, { force: true })
  const temp = `${file}${CREATING}${process.pid}`
  try {
    const instance = await duckdbApi().DuckDBInstance.create(temp)
    instance.closeSync()
    await syncFile(temp)
    await link(temp, file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
    await syncFile(path.dirname(file))
  } finally {
    await rm(temp, { force: true })
    await rm(`${temp}.wal`, { force: true })
  }
}

async function removeDeadCreations(file: string): Promise<void> {
  const prefix = `${path.basename(file)}${CREATING}`
  for (const name of await readdir(path.dirname(file))) {
    if (!name.startsWith(prefix)) continue
    const pid = Number.parseInt(name.slice(prefix.length), 10)
    if (Number.isInteger(pid) && !isProcessAlive(pid))
      await rm(path.join(path.dirname(file), name), { force: true })
  }
}

/** The file's size; undefined when it does not exist. */
async function sizeOf(file: string): Promise<number | undefined> {
  return stat(file).then(
    (found) => found.size,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    },
  )
}

async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
