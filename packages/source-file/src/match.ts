import type { Stats } from 'node:fs'
import { type FileHandle, open, stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, extname, relative, resolve, sep } from 'node:path'
import { FileReadError } from './errors.js'

type Globber = typeof import('tinyglobby')
let globber: Globber | undefined

/**
 * tinyglobby, loaded the first time a path may be a pattern: it and picomatch take about 15 ms to
 * load, a cost on every sync's start that a plain path does not need.
 */
function tinyglobby(): Globber {
  globber ??= createRequire(import.meta.url)('tinyglobby') as Globber
  return globber
}

/** Whether `pattern` has wildcards. Without any of the characters that can make one, it has none. */
function isDynamicPattern(pattern: string): boolean {
  return /[*?[\]{}()!+@\\]/.test(pattern) && tinyglobby().isDynamicPattern(pattern)
}

export interface MatchedFile {
  /** The path relative to the config directory, with `/`: the file's key in the resume offset. */
  readonly key: string
  readonly path: string
}

/**
 * Opens `file` for reading and hands the handle, with what the file is now, to `use` (the handle keeps
 * reading this file even if another is renamed over it). Undefined when the file vanished since it
 * was listed. The handle is closed again when `use` throws or returns undefined; otherwise what `use`
 * returns owns it.
 */
export async function openMatched<T>(
  file: MatchedFile,
  use: (handle: FileHandle, stats: Stats) => Promise<T | undefined>,
): Promise<T | undefined> {
  let handle: FileHandle
  try {
    handle = await open(file.path, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new FileReadError(file.key, error)
  }
  let stats: Stats
  try {
    stats = await handle.stat()
  } catch (error) {
    await handle.close()
    throw new FileReadError(file.key, error)
  }
  try {
    const opened = await use(handle, stats)
    if (opened === undefined) await handle.close()
    return opened
  } catch (error) {
    await handle.close()
    throw error
  }
}

/** What tells a file that was not written to since it was listed: inode, size and modification time. */
export function stamp(stats: { ino: number | bigint; size: number | bigint; mtimeMs: number }): string {
  return `${stats.ino}:${stats.size}:${Math.floor(stats.mtimeMs)}`
}

/**
 * The files `pattern` matches now, in key order. A pattern without wildcards is a plain path, so
 * names with brackets or braces need no escaping.
 */
export async function matchFiles(pattern: string, configDir: string): Promise<MatchedFile[]> {
  const paths = isDynamicPattern(pattern)
    ? await tinyglobby().glob(pattern, {
        cwd: configDir,
        absolute: true,
        onlyFiles: true,
        expandDirectories: false,
      })
    : await existingFile(resolve(configDir, pattern))
  return paths
    .map((path) => ({ key: keyOf(path, configDir), path }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

async function existingFile(path: string): Promise<string[]> {
  const found = await stat(path).catch(() => undefined)
  return found?.isFile() ? [path] : []
}

function keyOf(path: string, configDir: string): string {
  return relative(configDir, path).split(sep).join('/')
}

/**
 * The namespace for a path without a configured one: the file name without its extension, with
 * wildcards and the separators next to them removed (`data/rentals-*.csv` → `rentals`).
 * Undefined when nothing is left (`*.csv`).
 */
export function defaultNamespace(pattern: string): string | undefined {
  const name = basename(pattern)
  const stem = name.slice(0, name.length - extname(name).length)
  const bare = isDynamicPattern(pattern) ? stem.replace(/\{[^}]*\}|\[[^\]]*\]|[*?!+@()]/g, '') : stem
  return bare.replace(/^[-_.\s]+|[-_.\s]+$/g, '') || undefined
}
