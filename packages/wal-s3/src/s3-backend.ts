/**
 * The writer's side of the S3 WAL: every frame one immutable object, PUT once under this writer's
 * own prefix; the ack watermark, the metadata and the writers in the log record (log-record.ts).
 *
 * Invariants:
 * - A frame is published (its append resolved) once its PUT answered 200; appends go one at a time,
 *   so this writer's FSNs have no gaps. A failed PUT stops the backend: whether the object exists is
 *   unknown, and the next open settles it by listing.
 * - Opening takes over the log: it closes the previous writer at the last FSN it published (its run
 *   of consecutive objects) and records itself as the next, in one conditional write of the record.
 *   An old writer that runs on (paused past its lease, partitioned) can still PUT objects, but under
 *   its own closed prefix, where nobody reads past `lastFsn`; its next write of the record fails its
 *   version check and it stops with WAL_FENCED.
 * - Objects at or below the watermark are deleted after the watermark moved; a delete that did not
 *   happen is redone at the next open.
 */
import { randomBytes } from 'node:crypto'
import { SlotFullError } from '@skippr/sf'
import type { Payload } from '@skippr/sf/slot'
import type { BackendOptions, WalBackend, WalFrame, WalMeta } from '@skippr/wal'
import { WalCorruptError } from '@skippr/wal'
import type { Bucket } from './bucket.js'
import { WalFencedError } from './errors.js'
import type { FrameKeys } from './frame-keys.js'
import { type FrameObject, publishedFrames, readFrames } from './log-reader.js'
import {
  compactWriters,
  decodeRecord,
  encodeRecord,
  type LogRecord,
  type LogRecordStore,
  type StoredRecord,
} from './log-record.js'

/** The largest frame: one PUT, and one batch frame in memory at a time. */
const MAX_FRAME_BYTES = 256 * 1024 * 1024

export function newId(): string {
  return randomBytes(6).toString('hex')
}

export async function readRecord(records: LogRecordStore, where: string): Promise<StoredRecord | undefined> {
  const stored = await records.read()
  if (stored === undefined) return undefined
  const record = decodeRecord(stored.value)
  if (record === undefined)
    throw new WalCorruptError(where, 'its record in the state store is not one this version wrote')
  return { record, version: stored.version }
}

export async function openS3Backend(
  options: BackendOptions,
  bucket: Bucket,
  keys: FrameKeys,
  records: LogRecordStore,
): Promise<WalBackend> {
  await bucket.check()
  const id = newId()
  for (let attempt = 0; ; attempt++) {
    const stored = await readRecord(records, keys.location(bucket.name))
    const current: LogRecord = stored?.record ?? { log: newId(), ackedFsn: 0n, meta: undefined, writers: [] }
    const pending = await publishedFrames(bucket, keys, current)
    const last = pending.at(-1)?.fsn ?? current.ackedFsn
    const closed = current.writers.map((w, i) =>
      i === current.writers.length - 1 && w.lastFsn === undefined ? { ...w, lastFsn: last } : w,
    )
    const record: LogRecord = {
      ...current,
      writers: compactWriters([...closed, { id, firstFsn: last + 1n }], current.ackedFsn),
    }
    if (await records.write(encodeRecord(record), stored?.version)) {
      const backend = new S3Backend(
        options,
        bucket,
        keys,
        records,
        id,
        { record, version: (stored?.version ?? 0) + 1 },
        pending,
      )
      backend.removeLeftovers()
      return backend
    }
    // Another open raced this one (the lease makes that rare): look again.
    if (attempt === 3) throw new WalFencedError(keys.location(bucket.name))
  }
}

class S3Backend implements WalBackend {
  readonly location: string
  readonly maxFrameBytes: number
  publishedFsn: bigint
  ackedFsn: bigint
  /** Size of each frame after the watermark, for the WAL_MAX_TOTAL_BYTES cap. */
  private readonly pendingSizes = new Map<bigint, number>()
  private pendingBytes = 0
  private broken: Error | undefined
  private appending: Promise<unknown> = Promise.resolve()
  private scratch = Buffer.alloc(0)
  private deleting: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly options: BackendOptions,
    private readonly bucket: Bucket,
    private readonly keys: FrameKeys,
    private readonly records: LogRecordStore,
    private readonly id: string,
    private stored: StoredRecord,
    pending: readonly FrameObject[],
  ) {
    this.location = keys.location(bucket.name)
    this.maxFrameBytes = Math.min(options.bytesPerFile, MAX_FRAME_BYTES)
    this.ackedFsn = stored.record.ackedFsn
    this.publishedFsn = pending.at(-1)?.fsn ?? this.ackedFsn
    for (const frame of pending) this.track(frame.fsn, frame.size)
  }

  append(payload: Payload): Promise<bigint> {
    const pieces = payload instanceof Uint8Array ? [payload] : (payload as readonly Uint8Array[])
    const size = pieces.reduce((sum, piece) => sum + piece.length, 0)
    if (this.broken) return Promise.reject(this.broken)
    if (this.pendingBytes > 0 && this.pendingBytes + size > this.options.maxTotalBytes) {
      return Promise.reject(
        new SlotFullError(
          `${this.pendingBytes} bytes of unlanded frames in ${this.location}, cap ${this.options.maxTotalBytes}`,
        ),
      )
    }
    const appended = this.appending.then(() => this.put(this.joined(pieces, size)))
    this.appending = appended.catch(() => {})
    return appended
  }

  /**
   * The frame as one buffer for its PUT: a piece alone as it is, pieces copied into one buffer
   * kept for the next frame. Appends run one at a time and a PUT (with the SDK's retries) is over
   * before the next frame is copied, so the bytes never change under a request, and no 10 MB
   * buffer per commit is left for the collector.
   */
  private joined(pieces: readonly Uint8Array[], size: number): Uint8Array {
    if (pieces.length === 1) return pieces[0] as Uint8Array
    if (this.scratch.length < size) this.scratch = Buffer.allocUnsafe(size)
    let at = 0
    for (const piece of pieces) {
      this.scratch.set(piece, at)
      at += piece.length
    }
    return this.scratch.subarray(0, size)
  }

  private async put(body: Uint8Array): Promise<bigint> {
    if (this.broken) throw this.broken
    const fsn = this.publishedFsn + 1n
    try {
      await this.bucket.put(this.keys.frame(this.stored.record.log, this.id, fsn), body)
    } catch (error) {
      this.broken = error as Error
      throw error
    }
    this.publishedFsn = fsn
    this.track(fsn, body.length)
    return fsn
  }

  read(fromFsn: bigint): AsyncIterable<WalFrame> {
    const from = fromFsn > this.ackedFsn ? fromFsn : this.ackedFsn + 1n
    const frames: FrameObject[] = []
    for (let fsn = from; fsn <= this.publishedFsn; fsn++) frames.push(this.frameObject(fsn))
    return readFrames(this.bucket, frames, () => this.ackedUnlessTakenOver())
  }

  /**
   * Where the log's ack stands, asked when a frame this writer published is gone: acked and deleted
   * by a writer that took the log over (this one was paused past its lease) is fencing, not a
   * corrupt WAL, and this writer stops as it would at its next record write.
   */
  private async ackedUnlessTakenOver(): Promise<bigint> {
    const now = await readRecord(this.records, this.location)
    if (now === undefined || now.version !== this.stored.version) {
      this.broken = new WalFencedError(this.location)
      throw this.broken
    }
    return now.record.ackedFsn
  }

  async ensureRoom(): Promise<void> {
    // A bucket does not fill up; WAL_MAX_TOTAL_BYTES is the cap (append).
  }

  async ack(fsn: bigint): Promise<void> {
    if (fsn <= this.ackedFsn) return
    // Named before the record forgets the writers they belong to.
    const gone: string[] = []
    for (let f = this.ackedFsn + 1n; f <= fsn; f++) gone.push(this.frameObject(f).key)
    const record = this.stored.record
    await this.writeRecord({ ...record, ackedFsn: fsn, writers: compactWriters(record.writers, fsn) })
    for (let f = this.ackedFsn + 1n; f <= fsn; f++) {
      this.pendingBytes -= this.pendingSizes.get(f) ?? 0
      this.pendingSizes.delete(f)
    }
    this.ackedFsn = fsn
    this.deleteLater(gone)
  }

  async seal(): Promise<void> {
    // Every frame is its own object: there is no open file to close.
  }

  async readMeta(): Promise<WalMeta | undefined> {
    return this.stored.record.meta
  }

  async writeMeta(meta: WalMeta): Promise<void> {
    await this.writeRecord({ ...this.stored.record, meta })
  }

  async clear(): Promise<void> {
    await this.appending
    const old = this.stored.record.log
    await this.writeRecord({
      ...this.stored.record,
      log: newId(),
      ackedFsn: 0n,
      writers: [{ id: this.id, firstFsn: 1n }],
    })
    this.publishedFsn = this.ackedFsn = 0n
    this.pendingSizes.clear()
    this.pendingBytes = 0
    this.deleteLater(this.bucket.list(this.keys.logPrefix(old)).then((objects) => objects.map((o) => o.key)))
  }

  async close(): Promise<void> {
    await this.appending
    await this.deleting
  }

  /**
   * Deletes what earlier writers left (in the background): frames at or below the watermark, a
   * fenced writer's strays, and logs an earlier clear() did not finish deleting.
   */
  removeLeftovers(): void {
    const keep = new Set<string>()
    for (let fsn = this.ackedFsn + 1n; fsn <= this.publishedFsn; fsn++) keep.add(this.frameObject(fsn).key)
    const stale = this.bucket
      .list(this.keys.pipelinePrefix)
      .then((objects) => objects.map((o) => o.key).filter((key) => !keep.has(key)))
    this.deleteLater(stale)
  }

  private frameObject(fsn: bigint): FrameObject {
    const record = this.stored.record
    const writer = record.writers.findLast((w) => fsn >= w.firstFsn) ?? record.writers[0]
    return {
      fsn,
      key: this.keys.frame(record.log, writer?.id ?? this.id, fsn),
      size: this.pendingSizes.get(fsn) ?? 0,
    }
  }

  private track(fsn: bigint, size: number): void {
    this.pendingSizes.set(fsn, size)
    this.pendingBytes += size
  }

  /** One conditional write; a version that moved means another writer opened the log since. */
  private async writeRecord(record: LogRecord): Promise<void> {
    if (!(await this.records.write(encodeRecord(record), this.stored.version))) {
      this.broken = new WalFencedError(this.location)
      throw this.broken
    }
    this.stored = { record, version: this.stored.version + 1 }
  }

  /** Deletes one batch of keys at a time, in order: landed frames are few, and never urgent. */
  private deleteLater(keys: readonly string[] | Promise<readonly string[]>): void {
    this.deleting = this.deleting
      .then(() => keys)
      .then((list) => (list.length === 0 ? undefined : this.bucket.delete(list)))
      .catch((error: unknown) =>
        this.options.logger?.warn('could not delete landed WAL objects; the next open retries', {
          reason: (error as Error).message,
        }),
      )
  }
}
