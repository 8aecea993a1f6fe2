/**
 * The `disk` backend: an `@skippr/sf` slot at `<dataDir>/wal/<pipeline>/` (the pipeline name, encoded, is
 * the slot's sender id) and, beside it, `<pipeline>.wal-meta`: the epoch and the reset flag as JSON,
 * replaced atomically (temp file, fdatasync, rename, directory fsync), and `<pipeline>.wal-reserve`, the
 * room kept for landing on a full disk (room.ts). A full device is WAL_DISK_FULL, whether the room check
 * or a write found it; the slot's cap (WAL_MAX_TOTAL_BYTES) is its SF_BACKPRESSURE. Its snapshot view is
 * `openSlotSnapshot` of `@skippr/sf` and a read of the same metadata file: no lock, no writes.
 */
import { constants } from 'node:fs'
import * as fsp from 'node:fs/promises'
import path from 'node:path'
import { makeDirectory } from '@skippr/connector-api'
import { openSlot, openSlotSnapshot, type Payload, type Slot } from '@skippr/sf/slot'
import type {
  BackendOptions,
  SnapshotSourceOptions,
  WalBackend,
  WalBackendType,
  WalFrame,
  WalLogSnapshot,
  WalMeta,
  WalSnapshotSource,
} from './backend.js'
import { WalConfigError, WalCorruptError, WalDiskFullError } from './errors.js'
import { isEpoch } from './frame.js'
import { DiskRoom } from './room.js'

/**
 * The slot's fixed costs inside one segment file: its header, one frame header, and the seal's room at
 * the end (the slot seals a full file only when its frames leave that room, and a sealed file reopens
 * without its frames being read).
 */
export const SEGMENT_OVERHEAD_BYTES = 32 + 32 + 8
const META_SUFFIX = '.wal-meta'
const RESERVE_SUFFIX = '.wal-reserve'

/** DROP PIPELINE: the reserve a closed WAL keeps beside its files, deleted with the rest. */
export async function removeDiskReserve(dataDir: string, pipeline: string): Promise<void> {
  await fsp.rm(path.join(dataDir, 'wal', `${slotName(pipeline)}${RESERVE_SUFFIX}`), { force: true })
}

async function openDiskBackend(options: BackendOptions): Promise<WalBackend> {
  const sfDir = path.join(options.dataDir, 'wal')
  const senderId = slotName(options.pipeline)
  await makeDirectory(sfDir)
  const room = new DiskRoom(sfDir, path.join(sfDir, `${senderId}${RESERVE_SUFFIX}`), {
    bytes: options.keepFreeBytes,
    batches: options.keepFreeBatches,
  })
  const open = () =>
    openSlot({
      sfDir,
      senderId,
      maxSegmentBytes: options.bytesPerFile,
      // At the cap a commit waits for landed batches to free room (wal.ts); the source position stays
      // behind the batch meanwhile.
      maxTotalBytes: options.maxTotalBytes,
      durability: 'append',
      // A WAL starts empty on every run (a drained WAL leaves no files), so each batch of a run would
      // otherwise first zero-fill a new file of its own size and sync it: as many bytes again to the
      // disk. Sparse files skip that; a full disk then fails the commit in its write (still
      // SF_DISK_FULL) and stops the slot instead of leaving it usable, and the next run recovers it.
      preallocate: 'sparse',
      ...(options.logger && { logger: options.logger }),
    })
  await room.releaseIfLow()
  const slot = await open()
  try {
    await room.replenish()
  } catch (e) {
    await slot.close()
    throw e
  }
  return new DiskBackend(options, sfDir, senderId, room, slot, open)
}

/**
 * The pipeline name as a slot sender id (letters, digits, `.`, `_`, `-`): ASCII letters, digits, `_` and
 * `-` stay, every other byte of its UTF-8 becomes `.XX` (hex), so distinct names stay distinct and none
 * can climb out of `wal/`.
 */
export function slotName(pipeline: string): string {
  if (pipeline === '') throw new WalConfigError('pipeline', 'the pipeline name must not be empty')
  let out = ''
  for (const byte of Buffer.from(pipeline, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += /[A-Za-z0-9_-]/.test(c) ? c : `.${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

class DiskBackend implements WalBackend {
  readonly location: string
  readonly maxFrameBytes: number

  constructor(
    private readonly options: BackendOptions,
    private readonly sfDir: string,
    private readonly senderId: string,
    private readonly room: DiskRoom,
    private slot: Slot,
    private readonly reopen: () => Promise<Slot>,
  ) {
    this.location = path.join(sfDir, senderId)
    this.maxFrameBytes = options.bytesPerFile - SEGMENT_OVERHEAD_BYTES
  }

  get publishedFsn(): bigint {
    return this.slot.publishedFsn
  }

  get ackedFsn(): bigint {
    return this.slot.ackedFsn
  }

  async append(payload: Payload): Promise<bigint> {
    try {
      return await this.slot.append(payload)
    } catch (e) {
      if (!isDiskFull(e)) throw e
      // Out of space for real: landing gets the reserve.
      await this.room.release().catch(() => {})
      throw this.diskFullError(`no space left while writing the WAL in ${this.location}`, e)
    }
  }

  async ensureRoom(bytes: number): Promise<void> {
    const shortage = await this.room.shortage(bytes)
    if (shortage === undefined) return
    // Reading stops, landing follows: it gets the reserve too, which close() makes again if room allows.
    await this.room.release().catch(() => {})
    throw this.diskFullError(shortage)
  }

  read(fromFsn: bigint): AsyncIterable<WalFrame> {
    return this.slot.replay(fromFsn)
  }

  ack(fsn: bigint): Promise<void> {
    return this.slot.ack(fsn)
  }

  seal(): Promise<void> {
    return this.slot.seal()
  }

  async readMeta(): Promise<WalMeta | undefined> {
    const file = this.metaFile()
    const text = await readMetaText(file)
    if (text === undefined) return undefined
    const meta = parseMeta(text)
    if (meta === undefined) {
      throw new WalCorruptError(file, `unreadable WAL metadata ${JSON.stringify(text.slice(0, 80))}`)
    }
    return meta
  }

  async writeMeta(meta: WalMeta): Promise<void> {
    const file = this.metaFile()
    const tmp = `${file}.tmp`
    const handle = await fsp.open(tmp, 'w')
    try {
      await handle.writeFile(`${JSON.stringify({ version: 1, ...meta })}\n`)
      await handle.datasync()
    } finally {
      await handle.close()
    }
    await fsp.rename(tmp, file)
    await syncDir(this.sfDir)
  }

  async clear(): Promise<void> {
    await this.slot.close()
    await fsp.rm(this.location, { recursive: true, force: true })
    await syncDir(this.sfDir)
    this.slot = await this.reopen()
  }

  async close(): Promise<void> {
    await this.slot.close()
    // Landing freed room after a full disk: have the reserve again for the next one.
    await this.room.replenish().catch(() => {})
  }

  private metaFile(): string {
    return metaPath(this.sfDir, this.senderId)
  }

  private diskFullError(detail: string, cause?: unknown): WalDiskFullError {
    return new WalDiskFullError(this.options.pipeline, this.options.dataDir, detail, { cause })
  }
}

/**
 * SF_DISK_FULL, also as the cause of the slot stopping: with sparse files a full disk fails a write,
 * and the slot then refuses every append with SF_SLOT_CLOSED.
 */
function isDiskFull(e: unknown): boolean {
  for (let error = e; error instanceof Error; error = error.cause)
    if ((error as { code?: unknown }).code === 'SF_DISK_FULL') return true
  return false
}

/** The lock-free view: the slot's snapshot and the metadata file, read as they are at each call. */
async function openDiskSnapshot(options: SnapshotSourceOptions): Promise<WalSnapshotSource> {
  const sfDir = path.join(options.dataDir, 'wal')
  const senderId = slotName(options.pipeline)
  const file = metaPath(sfDir, senderId)
  return {
    location: path.join(sfDir, senderId),
    // Unreadable counts as absent for a reader: the writer rewrites it on open.
    readMeta: async () => {
      const text = await readMetaText(file)
      return text === undefined ? undefined : parseMeta(text)
    },
    openLog: (): Promise<WalLogSnapshot> => openSlotSnapshot({ sfDir, senderId }),
  }
}

/** WAL_STORAGE=disk: the log in `<dataDir>/wal/`. */
export const diskWal: WalBackendType = {
  name: 'disk',
  open: openDiskBackend,
  openSnapshot: openDiskSnapshot,
}

function metaPath(sfDir: string, senderId: string): string {
  return path.join(sfDir, `${senderId}${META_SUFFIX}`)
}

/** The metadata record's text; undefined when there is none. */
async function readMetaText(file: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw e
  }
}

/** The metadata in a record's text, or undefined when it is not a valid record. */
function parseMeta(text: string): WalMeta | undefined {
  try {
    const v = JSON.parse(text) as { version?: unknown; epoch?: unknown; resetting?: unknown }
    if (v.version !== 1 || typeof v.epoch !== 'string' || !isEpoch(v.epoch)) return undefined
    return { epoch: v.epoch, resetting: v.resetting === true }
  } catch {
    return undefined
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, constants.O_RDONLY | constants.O_DIRECTORY)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
