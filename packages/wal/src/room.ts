/**
 * Room on the WAL's device for landing after the disk fills. Until its first trim frees a WAL file,
 * landing writes a little to the same disk: the resume position and counters (the state store), the
 * slot's ack watermark and lock heartbeat, log lines, and a destination's load files (the DuckDB sink
 * spools each batch it lands under the data directory, packages/sink-duckdb/src/sink.ts). A disk the WAL
 * filled to the last byte would stop those, and with them the landing that frees space. So:
 *
 * - a commit fails as "disk full" before it writes anything when it would leave less free than
 *   `keep.bytes` plus `keep.batches` batches of its own size: the WAL never takes the room landing
 *   needs (the batches are for a destination's load files);
 * - `<dataDir>/wal/<name>.wal-reserve`, RESERVE_BYTES of written zeros, is given back (deleted) when the
 *   disk is full: when a commit fails for want of room (reading stops and landing follows), and when an
 *   open finds less than `keep.bytes` free, so that the slot's lock record can be written. Another
 *   program may have taken the room kept free; the reserve is the WAL's own. It is made again at open
 *   and close when the disk has room for it and `keep.bytes` beside.
 */
import * as fsp from 'node:fs/promises'

export const RESERVE_BYTES = 1024 * 1024
/** What the WAL itself needs free for landing (state store, watermark, lock, logs), without a destination's. */
export const DEFAULT_KEEP_FREE_BYTES = 1024 * 1024

/** Room a commit leaves free for landing: `bytes`, plus `batches` batches of the commit's size. */
export interface KeepFree {
  readonly bytes: number
  readonly batches: number
}

export class DiskRoom {
  constructor(
    /** A directory on the WAL's device. */
    private readonly dir: string,
    private readonly reserveFile: string,
    private readonly keep: KeepFree,
  ) {}

  /** Bytes an unprivileged writer may still allocate on the device. */
  async freeBytes(): Promise<number> {
    const stats = await fsp.statfs(this.dir)
    return stats.bavail * stats.bsize
  }

  /** Why writing `bytes` more would leave too little room for landing; undefined when it would not. */
  async shortage(bytes: number): Promise<string | undefined> {
    const free = await this.freeBytes()
    const keep = this.keep.bytes + this.keep.batches * bytes
    if (free - bytes >= keep) return undefined
    return (
      `${formatBytes(free)} free, ${formatBytes(bytes + keep)} needed (a batch of ${formatBytes(bytes)}, ` +
      `and ${formatBytes(keep)} kept free for landing)`
    )
  }

  /** A disk with less than `keep.bytes` free gets the reserve back, so that landing (or opening) can write. */
  async releaseIfLow(): Promise<void> {
    if ((await this.freeBytes()) < this.keep.bytes) await this.release()
  }

  /** Deletes the reserve (a no-op without one): its blocks are free for landing. */
  async release(): Promise<void> {
    await fsp.rm(this.reserveFile, { force: true })
  }

  /** Makes the reserve if it is missing or short and the disk has room for it beside `keep.bytes`. */
  async replenish(): Promise<void> {
    const size = await fsp.stat(this.reserveFile).then(
      (s) => s.size,
      () => 0,
    )
    if (size >= RESERVE_BYTES) return
    if ((await this.freeBytes()) < this.keep.bytes + RESERVE_BYTES - size) return
    try {
      const handle = await fsp.open(this.reserveFile, 'w')
      try {
        // Written zeros, not a sparse length: the point is blocks that are allocated now.
        await handle.writeFile(Buffer.alloc(RESERVE_BYTES))
        await handle.datasync()
      } finally {
        await handle.close()
      }
    } catch (e) {
      // Another writer took the room meanwhile: go on without a reserve, as on a full disk.
      await this.release()
      if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e
    }
  }
}

/** `812 KiB`, `3.2 MiB`: sizes for messages. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = Math.max(0, bytes)
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1
  return `${value.toFixed(digits)} ${units[unit]}`
}
