/**
 * Replacing skippr.yml so that a crash or a full disk leaves the old file or the new one, never a
 * mix: write a temporary file beside it, fsync it, rename it over the file, fsync the directory.
 * The file's permissions are kept.
 */
import { constants } from 'node:fs'
import { open, readFile, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import { formatOf } from '../config/formats.js'

export function readText(file: string): Promise<string> {
  return readFile(file, 'utf8')
}

/**
 * Replaces a config file with YAML `text`. The editors (`skipprd connect`, `Config.save()`) write
 * YAML, so a JSON or TOML config is refused rather than overwritten with another format.
 */
export async function replaceConfigFile(file: string, text: string): Promise<void> {
  const format = formatOf(file)
  if (format !== 'yaml')
    throw new ConfigError(
      `${path.basename(file)}: skipprd writes config files as YAML and will not rewrite this ${format.toUpperCase()} file: edit it by hand, or move its settings to skippr.yml`,
    )
  await writeFileAtomically(file, text)
}

async function writeFileAtomically(file: string, text: string): Promise<void> {
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
