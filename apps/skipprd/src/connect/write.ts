/**
 * Replacing skippr.yml so that a crash or a full disk leaves the old file or the new one, never a
 * mix: write a temporary file beside it, fsync it, rename it over the file, fsync the directory.
 * The file's permissions are kept.
 */
import { constants } from 'node:fs'
import { open, readFile, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'

export function readText(file: string): Promise<string> {
  return readFile(file, 'utf8')
}

export async function writeFileAtomically(file: string, text: string): Promise<void> {
  const mode = await stat(file).then(
    (s) => s.mode & 0o777,
    () => 0o644,
  )
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  try {
    const handle = await open(tmp, 'w', mode)
    try {
      await handle.writeFile(text, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(tmp, file)
  } catch (error) {
    await rm(tmp, { force: true })
    throw error
  }
  const dir = await open(path.dirname(file), constants.O_RDONLY | constants.O_DIRECTORY)
  try {
    await dir.sync()
  } finally {
    await dir.close()
  }
}
