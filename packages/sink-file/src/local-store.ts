/**
 * An `ObjectStore` on the local disk: a key is a file below the root directory (the File sink's
 * path with its prefix), created once (durable.ts) and never replaced. There is no metadata, so
 * `stat` hashes the file's bytes, which it only does when a retry finds a file at its key.
 */
import { readdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { isProcessAlive, permanent } from '@skippr/connector-api'
import type { CreateResult, ObjectInfo, ObjectStore, StoredObject } from '@skippr/object-sink'
import { sha256 } from '@skippr/object-sink'
import { createWhole, ensureDir, writeSynced } from './durable.js'
import { FileNotWritableError, FileWriteError } from './errors.js'
import { temporaryName, temporaryOf } from './names.js'

/** Errors that retrying cannot fix: the directory refuses us. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS'])

export class LocalStore implements ObjectStore {
  /** link() refuses an existing name, so a key is created once. */
  readonly createsOnce = true

  /** `root`: an absolute directory, created if missing. */
  constructor(readonly location: string) {}

  /**
   * Creates the root directory if needed, removes the temporary files that writers which died
   * (SIGKILL, power cut) left for the own keys, and checks that a file can be created in the root.
   */
  async open(isOwnKey: (key: string) => boolean): Promise<void> {
    await this.writing(this.location, async () => {
      await ensureDir(this.location)
      for (const key of await this.leftovers(isOwnKey)) await rm(this.path(key), { force: true })
      const probe = this.path(temporaryName('skippr-write-check'))
      await writeSynced(probe, [])
      await rm(probe)
    })
  }

  async create(key: string, body: readonly Uint8Array[], _info: ObjectInfo): Promise<CreateResult> {
    const file = this.path(key)
    return this.writing(file, async () => {
      await ensureDir(path.dirname(file))
      return createWhole(file, body)
    })
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    const bytes = await readFile(this.path(key)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    })
    return bytes && { sha256: sha256([bytes]), bytes: bytes.length }
  }

  async list(prefix: string): Promise<string[]> {
    // From the prefix's directory down, into the directories whose keys start with the prefix.
    const start = prefix.slice(0, prefix.lastIndexOf('/') + 1)
    const files = await this.filesBelow(start, (dir) => dir.startsWith(prefix))
    return files
      .filter((key) => key.startsWith(prefix) && temporaryOf(path.posix.basename(key)) === undefined)
      .sort()
  }

  async read(key: string): Promise<Uint8Array> {
    return readFile(this.path(key))
  }

  async close(): Promise<void> {}

  private path(key: string): string {
    return path.join(this.location, ...key.split('/'))
  }

  /** Runs a write; its failure becomes fatal when the directory refuses us, retried otherwise. */
  private async writing<T>(file: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? ''
      if (NOT_WRITABLE.has(code)) throw permanent(new FileNotWritableError(file, error))
      throw new FileWriteError(file, error)
    }
  }

  /**
   * The temporary files of own keys whose writer is dead. Only directories that can hold own keys
   * are walked: every top-level one (a namespace, `_manifests`), and below them those `isOwnKey`
   * accepts as a key prefix (`orders/<pipeline>/`).
   */
  private async leftovers(isOwnKey: (key: string) => boolean): Promise<string[]> {
    const mayHoldOwn = (dir: string) => dir.split('/').length <= 2 || isOwnKey(dir)
    const files = await this.filesBelow('', mayHoldOwn)
    return files.filter((key) => {
      const temporary = temporaryOf(path.posix.basename(key))
      return (
        temporary !== undefined &&
        !isProcessAlive(temporary.pid) &&
        isOwnKey(path.posix.join(path.posix.dirname(key), temporary.name))
      )
    })
  }

  /**
   * The keys of the regular files below the directory `start` (`''` or `a/b/`), temporary ones
   * too; a directory is entered when `enter` accepts its key (`a/b/c/`). A missing start is empty.
   */
  private async filesBelow(start: string, enter: (dir: string) => boolean): Promise<string[]> {
    const files: string[] = []
    let level = [start]
    while (level.length > 0) {
      const next: string[] = []
      for (const dir of level) {
        for (const entry of await entriesOf(this.path(dir))) {
          const key = `${dir}${entry.name}`
          if (entry.isDirectory() && enter(`${key}/`)) next.push(`${key}/`)
          else if (entry.isFile()) files.push(key)
        }
      }
      level = next
    }
    return files
  }
}

/** The entries of a directory; none when it does not exist. */
async function entriesOf(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}
