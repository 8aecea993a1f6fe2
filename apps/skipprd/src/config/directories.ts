/**
 * Working directories (DATA_DIR, a pipeline's data_dir) are created when missing, so a path that
 * is, or passes through, a file would fail much later with ENOTDIR or EEXIST from deep inside the
 * WAL or the state store. It is checked when the config is read instead.
 */
import { type Stats, statSync } from 'node:fs'
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'

/** The path's stats, or undefined when nothing is there (ENOENT, or ENOTDIR: a file on the way). */
export function statIfAny(at: string): Stats | undefined {
  try {
    return statSync(at)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw error
  }
}

/** The first existing path on the way from `absolute` up to the root that is not a directory. */
export function blockingFile(absolute: string): string | undefined {
  for (let at = absolute; ; at = path.dirname(at)) {
    const stats = statIfAny(at)
    if (stats) return stats.isDirectory() ? undefined : at
    if (path.dirname(at) === at) return undefined
  }
}

/**
 * Refuses a working directory that cannot be one. `where` and `setting` name it as the user wrote
 * it (`DATA_DIR`; `skippr.yml: pipelines.p.data_dir` and `data_dir`), `given` is its value.
 */
export function requireDirectory(absolute: string, given: string, where: string, setting: string): void {
  const file = blockingFile(absolute)
  if (file === undefined) return
  throw new ConfigError(
    `${where}: ${file === absolute ? given : file} is a file, not a directory: point ${setting} at a directory (it is created if missing)`,
  )
}
