/**
 * Where a WAL's frames live: the seam between the WAL logic (batch frames, landing, resume offsets,
 * epochs, the snapshot reader's consistency rules), which sits above it, and a storage. A storage is a
 * `WalBackendType` the caller passes to openWal() and openWalSnapshot() (`diskWal` by default), so
 * another storage (`s3`, `clustered`) is a new backend type, not a change to this package's callers.
 *
 * A backend is an append-only log of frames numbered by FSN (1, 2, 3, … never reused while the log exists)
 * with a cumulative ack watermark, plus one small metadata record replaced atomically. Its snapshot view
 * reads the same log and record from another process without the writer's lock.
 */
import type { Payload, SlotLogger } from '@skippr/sf/slot'

/** A storage for WALs: opens a pipeline's log for its one writer, or a lock-free view for readers. */
export interface WalBackendType {
  /** The storage's name (the `WAL_STORAGE` value it implements), for messages. */
  readonly name: string
  /** Opens (or creates) the pipeline's log for writing; one writer at a time. */
  open(options: BackendOptions): Promise<WalBackend>
  /** The read-only view of the pipeline's log: it takes no lock and writes nothing. */
  openSnapshot(options: SnapshotSourceOptions): Promise<WalSnapshotSource>
}

export interface WalFrame {
  readonly fsn: bigint
  readonly payload: Uint8Array
}

/** The WAL's own record beside the log: its epoch, and whether a reset was under way. */
export interface WalMeta {
  readonly epoch: string
  /** Set while reset() runs: an open that finds it finishes the reset first. */
  readonly resetting: boolean
}

export interface WalBackend {
  /** Where the log lives, for messages. */
  readonly location: string
  /** Largest payload one append() takes. */
  readonly maxFrameBytes: number
  /** FSN of the last durable frame; 0 for a log that never held one. */
  readonly publishedFsn: bigint
  /** The ack watermark; 0 when nothing was acked. */
  readonly ackedFsn: bigint
  /**
   * Appends one frame (one buffer, or pieces back to back); its FSN once it is durable. The payload must
   * not change until the promise settles. At maxTotalBytes it fails at once with SF_BACKPRESSURE (landed
   * batches free room); out of space on the device, with WAL_DISK_FULL.
   */
  append(payload: Payload): Promise<bigint>
  /**
   * The frames from `fromFsn` (or the oldest kept after it) to the last one published when the read
   * reached it, in order, read from storage with bounded memory. A yielded payload stays valid.
   */
  read(fromFsn: bigint): AsyncIterable<WalFrame>
  /**
   * Throws WAL_DISK_FULL when storing `bytes` more would leave too little room for landing the batches
   * committed so far.
   */
  ensureRoom(bytes: number): Promise<void>
  /** Moves the watermark to `fsn` (cumulative); storage fully at or below it may go. */
  ack(fsn: bigint): Promise<void>
  /** Closes the file being written even if it is not full, so it can go once landed. */
  seal(): Promise<void>
  readMeta(): Promise<WalMeta | undefined>
  /** Replaces the metadata record: afterwards it is the old or the new one, never a mix. */
  writeMeta(meta: WalMeta): Promise<void>
  /** Deletes every frame and the watermark: the log starts again from FSN 1. */
  clear(): Promise<void>
  close(): Promise<void>
}

export interface BackendOptions {
  readonly pipeline: string
  readonly dataDir: string
  readonly bytesPerFile: number
  /** Cap on the log's storage (WAL_MAX_TOTAL_BYTES). */
  readonly maxTotalBytes: number
  /** Room a commit leaves free on the device for landing: bytes, plus batches of its own size (room.ts). */
  readonly keepFreeBytes: number
  readonly keepFreeBatches: number
  /** Where the storage reports recovery findings and background failures. */
  readonly logger: SlotLogger | undefined
}

export interface SnapshotSourceOptions {
  readonly pipeline: string
  /** The pipeline's data directory, as given to open(). */
  readonly dataDir: string
}

/**
 * A reader's view of a log a writer may be changing. It has no state of its own: each call reads the
 * storage as it is then. The snapshot reader (snapshot-reader.ts) reads the metadata before and after
 * openLog() to know the epoch of the frames it got.
 */
export interface WalSnapshotSource {
  /** Where the log lives, for messages. */
  readonly location: string
  /** The metadata record as stored now; undefined when absent or unreadable (the writer rewrites it). */
  readMeta(): Promise<WalMeta | undefined>
  /** The frames after the ack watermark as of now; a log never written is an empty one. */
  openLog(): Promise<WalLogSnapshot>
}

/**
 * The unacked frames of a log at one moment: a prefix of the log, up to the last frame stored whole when
 * the read reaches it (a frame being appended is never returned in part). Landing and trimming under it
 * do not disturb it.
 */
export interface WalLogSnapshot {
  /** The ack watermark the frames follow; it may rise while frames() reads, which then steps over to it. */
  readonly ackedFsn: bigint
  /**
   * The unacked frames from `fromFsn` on (default: all), in FSN order, each payload the caller's to keep.
   * Pass only an FSN that follows frames an earlier snapshot read whole. Read it once; it closes the view.
   */
  frames(fromFsn?: bigint): AsyncIterable<WalFrame>
  /** Releases what the view holds, without reading (frames() does when it ends). */
  close(): Promise<void>
}
