/**
 * Where a WAL's frames live. The WAL logic (batch frames, landing, resume offsets, epochs) sits above this
 * interface, so the `s3` and `clustered` storages can be added as backends without touching callers.
 *
 * A backend is an append-only log of frames numbered by FSN (1, 2, 3, … never reused while the log exists)
 * with a cumulative ack watermark, plus one small metadata record replaced atomically.
 */
import type { Payload, SlotLogger } from '@skippr/sf/slot'
import { openDiskBackend } from './disk.js'
import { WalStorageUnavailableError } from './errors.js'
import type { WalStorage } from './settings.js'

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

export async function openBackend(storage: WalStorage, options: BackendOptions): Promise<WalBackend> {
  switch (storage) {
    case 'disk':
      return openDiskBackend(options)
    case 's3':
    case 'clustered':
      throw new WalStorageUnavailableError(storage)
  }
}
