/**
 * An `ObjectStore` on an SFTP server: a key is a file below the root directory (the sink's path
 * and prefix). A file is written under a temporary name in its final directory, flushed, and
 * renamed with the protocol's own rename, which refuses an existing target (OpenSSH links the
 * new name, so the check and the rename are one step): a file is created once, never replaced,
 * and never seen partly written. There is no metadata, so `stat` hashes the file's bytes.
 */
import { posix } from 'node:path'
import type { Logger } from '@skippr/connector-api'
import { permanent, SkipprError, silentLogger } from '@skippr/connector-api'
import type { CreateResult, ObjectInfo, ObjectStore, StoredObject } from '@skippr/object-sink'
import { sha256 } from '@skippr/object-sink'
import type { SftpLogin } from './connection.js'
import { SftpConnection } from './connection.js'
import type { LoginContext } from './errors.js'
import { NotADirectoryError, requestFailure } from './errors.js'
import type { ServerAddress } from './remote-root.js'
import { remotePath, sftpLocation } from './remote-root.js'
import type { Sftp } from './requests.js'
import { close, fsync, mkdir, open, readdir, rename, Status, stat, statusOf, unlink } from './requests.js'
import { intendedName, temporaryName } from './temporary-files.js'
import { readWhole, writeChunks } from './transfer.js'

export interface SftpStoreOptions extends SftpLogin {
  /** The directory the keys are under: the sink's path with its prefix (`rootDirectory`). */
  readonly root: string
}

/** Directories listed at once while walking a tree. */
const DIRECTORIES_AT_ONCE = 16

export class SftpStore implements ObjectStore {
  readonly location: string
  /** The protocol's rename refuses an existing target, so a key is created once. */
  readonly createsOnce = true
  private readonly root: string
  private readonly server: ServerAddress
  private readonly login: LoginContext
  private readonly connection: SftpConnection

  constructor(options: SftpStoreOptions, logger: Logger = silentLogger) {
    this.root = options.root
    this.server = { host: options.host, port: options.port, username: options.username }
    this.location = sftpLocation(options, options.root)
    this.login = {
      location: this.location,
      username: options.username,
      method: options.password === undefined ? 'private_key' : 'password',
    }
    this.connection = new SftpConnection(options, this.login, logger)
  }

  /**
   * Creates the root directory if needed, removes the temporary files crashed writers left for
   * the own keys, and checks that a file can be created in the root.
   */
  async open(isOwnKey: (key: string) => boolean): Promise<void> {
    await this.request('write to', '', async (sftp) => {
      await this.ensureDirectory(sftp, this.root)
      for (const key of await this.leftovers(sftp, isOwnKey)) await removeIfThere(sftp, this.path(key))
      await this.checkWritable(sftp)
    })
  }

  async create(key: string, body: readonly Uint8Array[], _info: ObjectInfo): Promise<CreateResult> {
    return this.request('create', key, async (sftp) => {
      const target = this.path(key)
      const temporary = posix.join(posix.dirname(target), temporaryName(posix.basename(target)))
      await this.writeFile(sftp, temporary, body)
      try {
        await rename(sftp, temporary, target)
        return 'created'
      } catch (error) {
        await removeIfThere(sftp, temporary).catch(() => undefined)
        if (await exists(sftp, target)) return 'exists'
        throw error
      }
    })
  }

  /** The file's size and SHA-256, computed by reading it: the server keeps no checksum. */
  async stat(key: string): Promise<StoredObject | undefined> {
    return this.request('read', key, async (sftp) => {
      const bytes = await readFile(sftp, this.path(key)).catch((error: unknown) => {
        if (statusOf(error) === Status.noSuchFile) return undefined
        throw error
      })
      return bytes && { sha256: sha256([bytes]), bytes: bytes.length }
    })
  }

  async list(prefix: string): Promise<string[]> {
    return this.request('list', prefix, async (sftp) => {
      // From the prefix's directory down, into the directories whose keys start with the prefix.
      const start = prefix.slice(0, prefix.lastIndexOf('/') + 1)
      const files = await this.filesBelow(sftp, start, (dir) => dir.startsWith(prefix))
      return files.filter((key) => key.startsWith(prefix) && !isTemporary(key)).sort()
    })
  }

  async read(key: string): Promise<Uint8Array> {
    return this.request('read', key, (sftp) => readFile(sftp, this.path(key)))
  }

  async close(): Promise<void> {
    await this.connection.close()
  }

  /** Runs requests on the channel; a failure becomes the classified error for `action` on `key`. */
  private async request<T>(action: string, key: string, run: (sftp: Sftp) => Promise<T>): Promise<T> {
    const sftp = await this.connection.channel()
    try {
      return await run(sftp)
    } catch (error) {
      if (error instanceof SkipprError) throw error
      throw requestFailure(error, action, key === '' ? this.location : `${this.location}/${key}`, this.login)
    }
  }

  private path(key: string): string {
    return remotePath(this.root, key)
  }

  /** Creates `path` (a new file: an existing one is an error) with the body, flushed to the server's disk. */
  private async writeFile(sftp: Sftp, path: string, body: readonly Uint8Array[]): Promise<void> {
    const handle = await open(sftp, path, 'wx').catch(async (error: unknown) => {
      if (statusOf(error) !== Status.noSuchFile) throw error
      await this.ensureDirectory(sftp, posix.dirname(path))
      return open(sftp, path, 'wx')
    })
    try {
      await writeChunks(sftp, handle, body)
      await fsync(sftp, handle)
      await close(sftp, handle)
    } catch (error) {
      await close(sftp, handle).catch(() => undefined)
      await removeIfThere(sftp, path).catch(() => undefined)
      throw error
    }
  }

  /** mkdir -p: creates the directory and any missing parents. */
  private async ensureDirectory(sftp: Sftp, dir: string): Promise<void> {
    try {
      await this.makeDirectory(sftp, dir)
    } catch (error) {
      const parent = posix.dirname(dir)
      if (statusOf(error) !== Status.noSuchFile || parent === dir) throw error
      await this.ensureDirectory(sftp, parent)
      await this.makeDirectory(sftp, dir)
    }
  }

  /**
   * One mkdir, where a directory already there (made by a concurrent writer, too) counts as made.
   * A missing parent stays NO_SUCH_FILE; so does a parent that is a file (ENOTDIR), which the
   * parent's own mkdir then reports.
   */
  private async makeDirectory(sftp: Sftp, dir: string): Promise<void> {
    try {
      await mkdir(sftp, dir)
    } catch (error) {
      if (statusOf(error) === Status.noSuchFile) throw error
      // OpenSSH answers an existing path with the generic FAILURE; look what is there.
      const found = await stat(sftp, dir).catch(() => undefined)
      if (found?.isDirectory()) return
      if (found) throw permanent(new NotADirectoryError(sftpLocation(this.server, dir)))
      throw error
    }
  }

  /**
   * The temporary files of own keys. Only directories that can hold own keys are walked: every
   * top-level one (a namespace, `_manifests`), and below them those `isOwnKey` accepts as a key
   * prefix (`orders/<pipeline>/`), as the key layout puts the pipeline second.
   */
  private async leftovers(sftp: Sftp, isOwnKey: (key: string) => boolean): Promise<string[]> {
    const mayHoldOwn = (dir: string) => dir.split('/').length <= 2 || isOwnKey(dir)
    const files = await this.filesBelow(sftp, '', mayHoldOwn)
    return files.filter((key) => {
      const name = intendedName(posix.basename(key))
      return name !== undefined && isOwnKey(posix.join(posix.dirname(key), name))
    })
  }

  /**
   * The keys of the regular files below the directory `start` (`''` or `a/b/`), temporary ones
   * too; a directory is entered when `enter` accepts its key (`a/b/c/`). A missing start is empty.
   */
  private async filesBelow(sftp: Sftp, start: string, enter: (dir: string) => boolean): Promise<string[]> {
    const files: string[] = []
    let level = [start]
    while (level.length > 0) {
      const next: string[] = []
      for (let i = 0; i < level.length; i += DIRECTORIES_AT_ONCE) {
        await Promise.all(
          level.slice(i, i + DIRECTORIES_AT_ONCE).map(async (dir) => {
            for (const entry of await entriesOf(sftp, this.path(dir))) {
              const key = `${dir}${entry.filename}`
              if (entry.attrs.isDirectory() && enter(`${key}/`)) next.push(`${key}/`)
              else if (entry.attrs.isFile()) files.push(key)
            }
          }),
        )
      }
      level = next
    }
    return files
  }

  /** Creates and removes a temporary file in the root, so a read-only root fails here, not at the first batch. */
  private async checkWritable(sftp: Sftp): Promise<void> {
    const probe = this.path(temporaryName('skippr-write-check'))
    await close(sftp, await open(sftp, probe, 'wx'))
    await unlink(sftp, probe)
  }
}

function isTemporary(key: string): boolean {
  return intendedName(posix.basename(key)) !== undefined
}

async function readFile(sftp: Sftp, path: string): Promise<Buffer> {
  const handle = await open(sftp, path, 'r')
  try {
    return await readWhole(sftp, handle)
  } finally {
    await close(sftp, handle).catch(() => undefined)
  }
}

/** The entries of a directory, without `.` and `..`; none when it does not exist. */
async function entriesOf(sftp: Sftp, dir: string) {
  try {
    return (await readdir(sftp, dir)).filter((entry) => entry.filename !== '.' && entry.filename !== '..')
  } catch (error) {
    if (statusOf(error) === Status.noSuchFile) return []
    throw error
  }
}

async function exists(sftp: Sftp, path: string): Promise<boolean> {
  try {
    await stat(sftp, path)
    return true
  } catch (error) {
    if (statusOf(error) === Status.noSuchFile) return false
    throw error
  }
}

async function removeIfThere(sftp: Sftp, path: string): Promise<void> {
  try {
    await unlink(sftp, path)
  } catch (error) {
    if (statusOf(error) !== Status.noSuchFile) throw error
  }
}
