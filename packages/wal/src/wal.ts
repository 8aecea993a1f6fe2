/**
 * The pipeline write-ahead log. A batch is committed when its batch frame is durable; it is landed when
 * markLanded() moved the ack watermark to that frame. Its identity is { pipeline, epoch, seq } where seq is
 * the FSN of its batch frame: FSNs never repeat while the log exists, a fresh log (FSN 1 again) gets a fresh
 * epoch, and ack(seq) lands exactly this batch and everything before it.
 *
 * Resume offset invariant: the last committed batch's offset while the log holds a batch after the
 * watermark; otherwise `positions`, which markLanded() writes before it acks (and so before anything can
 * be trimmed). So the position never falls behind a landed batch, and never passes a committed one.
 *
 * Space: at `maxTotalBytes` (WAL_MAX_TOTAL_BYTES) a commit waits until markLanded() frees room, so the
 * source waits with it; where nothing would free room it fails with WAL_FULL instead. A device too full
 * to leave landing its room fails the commit with WAL_DISK_FULL before anything is written (room.ts).
 * Either way a commit that fails leaves the position behind its batch.
 */
import type { SlotLogger } from '@skippr/sf/slot'
import { BatchAssembler } from './assemble.js'
import type { WalBackend, WalBackendType, WalMeta } from './backend.js'
import { diskWal } from './disk.js'
import { WalClosedError, WalCorruptError, WalFullError, WalLandOrderError } from './errors.js'
import { decodeFrame, encodeBatchFrames, mintEpoch } from './frame.js'
import { DEFAULT_KEEP_FREE_BYTES, formatBytes } from './room.js'
import { DEFAULT_MAX_DELAY_SECONDS, DEFAULT_MAX_TOTAL_BYTES, resolveWalSettings } from './settings.js'
import type { BatchIdentity, BatchInput, Offset, ResumePositions, WalBatch } from './types.js'

/** Where the WAL's storage reports recovery findings and background failures (default: stderr). */
export type WalLogger = SlotLogger

export interface WalOptions {
  readonly pipeline: string
  /** The pipeline's data directory (`data_dir`, else DATA_DIR, else ./data); the log is under `wal/`. */
  readonly dataDir: string
  /**
   * Where the log is stored (default `diskWal`). The caller picks it from its `WAL_STORAGE`: this package
   * does not read that setting.
   */
  readonly backend?: WalBackendType
  /** Target size of one WAL file (WAL_BYTES_PER_FILE); a larger batch spans several. */
  readonly bytesPerFile?: number
  /** Seal a WAL file this long after its first write even if it is not full (WAL_MAX_DELAY_SECONDS). */
  readonly maxDelaySeconds?: number
  /** Cap on the WAL files (WAL_MAX_TOTAL_BYTES, default 10 GiB, at least two WAL files). */
  readonly maxTotalBytes?: number
  /**
   * At the cap: `wait` (default) until markLanded() frees room; `fail` at once with WAL_FULL, for a
   * pipeline whose batches nothing lands.
   */
  readonly whenFull?: 'wait' | 'fail'
  /**
   * Room a commit leaves free on the device for landing: `keepFreeBytes` (default 1 MiB: the state store,
   * the WAL's own records, logs) plus `keepFreeBatches` batches of the commit's size (default 0: for a
   * destination that writes load files of the batches it lands). A commit that would leave less fails
   * with WAL_DISK_FULL.
   */
  readonly keepFreeBytes?: number
  readonly keepFreeBatches?: number
  readonly logger?: WalLogger
  /** Where the resume position survives once every batch carrying it is gone. */
  readonly positions: ResumePositions
  /**
   * Committed batches kept in memory until landed, so pending() hands them over without reading them back
   * (default 0: pending() always reads the log). A commit is kept while fewer are; the others, and
   * everything after a restart, come from disk.
   */
  readonly keepBatches?: number
}

/** Unlanded batches markLanded() can find without reading the log: a run from the watermark on. */
const KNOWN_BATCHES_MAX = 1024

export interface CommitOptions {
  /** Ends a wait at the cap: the commit rejects with the signal's reason and stores nothing more. */
  readonly signal?: AbortSignal
  /** Called each time the commit starts waiting at the cap for landed batches to free room. */
  readonly onFull?: () => void
}

interface BatchMark {
  readonly epoch: string
  readonly seq: bigint
  readonly offset: Offset | undefined
}

export async function openWal(options: WalOptions): Promise<Wal> {
  const bytesPerFile = options.bytesPerFile ?? resolveWalSettings({ env: {} }).bytesPerFile
  const backend = await (options.backend ?? diskWal).open({
    pipeline: options.pipeline,
    dataDir: options.dataDir,
    bytesPerFile,
    maxTotalBytes: options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES,
    keepFreeBytes: options.keepFreeBytes ?? DEFAULT_KEEP_FREE_BYTES,
    keepFreeBatches: options.keepFreeBatches ?? 0,
    logger: options.logger,
  })
  try {
    const wal = new Wal(options, backend)
    await wal.recover()
    return wal
  } catch (e) {
    await backend.close().catch(() => {})
    throw e
  }
}

export class Wal {
  readonly pipeline: string
  private epochValue = ''
  private lastCommitted: Offset | undefined
  /** Seq of the last committed batch, and of the last one landed (its ack durable, its files trimmed). */
  private lastCommittedSeq = 0n
  private landedSeq = 0n
  private landedCount = 0
  /** Commits waiting at the cap for a landing. */
  private readonly roomWaiters = new Set<() => void>()
  /** Consecutive unlanded batches, the first one right after the watermark. */
  private known: BatchMark[] = []
  /** Committed, unlanded batches held for pending(), keyed by the FSN of their first frame. */
  private readonly kept = new Map<bigint, WalBatch>()
  private readonly keepBatches: number
  private commits: Promise<unknown> = Promise.resolve()
  private landings: Promise<unknown> = Promise.resolve()
  private sealTimer: NodeJS.Timeout | undefined
  private closed = false
  private readonly positions: ResumePositions
  private readonly maxDelayMs: number
  private readonly maxTotalBytes: number
  private readonly whenFull: 'wait' | 'fail'

  /** @internal use openWal() */
  constructor(
    options: WalOptions,
    private readonly backend: WalBackend,
  ) {
    this.pipeline = options.pipeline
    this.positions = options.positions
    this.maxDelayMs = (options.maxDelaySeconds ?? DEFAULT_MAX_DELAY_SECONDS) * 1000
    this.keepBatches = options.keepBatches ?? 0
    this.maxTotalBytes = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES
    this.whenFull = options.whenFull ?? 'wait'
  }

  /** The epoch new batches get. */
  get epoch(): string {
    return this.epochValue
  }

  /** Batches marked landed since the WAL was opened. */
  get landedBatches(): number {
    return this.landedCount
  }

  /**
   * Stores the batch durably; resolves with its identity once it survives a crash. Commits run in order.
   * At the cap it waits for markLanded() to free room (see CommitOptions).
   */
  async commit(batch: BatchInput, options: CommitOptions = {}): Promise<BatchIdentity> {
    this.throwIfClosed()
    return this.serial('commits', async () => {
      const bytes = batch.parts.reduce((sum, part) => sum + bodyBytes(part.body), 0)
      await this.backend.ensureRoom(bytes)
      let seq = 0n
      let firstFsn: bigint | undefined
      // Stored with the batch, so whoever lands it, whenever, derives the same from it (object paths).
      const committedAt = Date.now()
      const frames = encodeBatchFrames(this.epochValue, batch, this.backend.maxFrameBytes, committedAt)
      for (const frame of frames) {
        seq = await this.appendWhenRoom(frame, { bytes, firstFsn }, options)
        firstFsn ??= seq
      }
      this.lastCommitted = batch.offset
      this.lastCommittedSeq = seq
      this.armSealTimer()
      const id = { pipeline: this.pipeline, epoch: this.epochValue, seq }
      if (firstFsn !== undefined && this.kept.size < this.keepBatches)
        this.kept.set(firstFsn, keptBatch(id, committedAt, batch))
      return id
    })
  }

  /**
   * Committed batches not yet landed, oldest first: a kept batch (`keepBatches`) straight from memory,
   * the others read from the log as they are consumed, one at a time. Ends at the last batch committed
   * when the read reaches the log's end. With `after` (a batch's `seq`), starts after that batch: a
   * reader that has batches in hand that are not marked landed yet goes on from the last of them.
   */
  async *pending(after?: bigint): AsyncGenerator<WalBatch> {
    this.throwIfClosed()
    let previous = after !== undefined && after > this.backend.ackedFsn ? after : this.backend.ackedFsn
    for (;;) {
      // A batch starts right after the one before it, unless frames of a commit cut short lie between:
      // then it is not found here, and the read below skips those frames.
      let batch = this.kept.get(previous + 1n)
      if (batch === undefined) {
        for await (batch of this.readBatches(previous)) {
          this.remember(previous, batch)
          previous = batch.id.seq
          yield batch
          if (this.kept.has(previous + 1n)) break
        }
        if (!this.kept.has(previous + 1n)) return
        continue
      }
      this.remember(previous, batch)
      previous = batch.id.seq
      yield batch
    }
  }

  /**
   * Records that the destination holds the batch: saves its offset to `positions`, then moves the ack
   * watermark to it, letting fully landed WAL files go. Batches land in commit order; landing one again is
   * a no-op.
   */
  async markLanded(id: BatchIdentity): Promise<void> {
    this.throwIfClosed()
    return this.serial('landings', async () => {
      if (id.seq <= this.backend.ackedFsn) return
      const head = this.known[0] ?? (await this.readHead())
      if (head === undefined || head.seq !== id.seq || head.epoch !== id.epoch) {
        throw new WalLandOrderError(
          describe(id),
          head ? describe({ ...head, pipeline: this.pipeline }) : 'none',
        )
      }
      await this.positions.save(head.offset)
      await this.backend.ack(head.seq)
      if (this.known[0] === head) this.known.shift()
      for (const [firstFsn, batch] of this.kept) if (batch.id.seq <= head.seq) this.kept.delete(firstFsn)
      this.landedSeq = head.seq
      this.landedCount++
      this.wakeRoomWaiters()
    })
  }

  /** Where the source resumes: the last committed batch's offset, else the saved position. */
  async resumeOffset(): Promise<Offset | undefined> {
    this.throwIfClosed()
    return this.lastCommitted
  }

  /** RESET PIPELINE: deletes every batch and the resume position, and starts a new epoch. */
  async reset(): Promise<void> {
    this.throwIfClosed()
    await this.serial('commits', () =>
      this.serial('landings', async () => {
        await this.backend.writeMeta({ epoch: this.epochValue, resetting: true })
        await this.clearLog()
      }),
    )
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.sealTimer)
    // A commit waiting at the cap sees the WAL closed and gives up.
    this.wakeRoomWaiters()
    await Promise.allSettled([this.commits, this.landings])
    this.kept.clear()
    await this.backend.close()
  }

  /** @internal Finishes an interrupted reset, picks the epoch, finds the resume offset. */
  async recover(): Promise<void> {
    const meta = await this.backend.readMeta()
    if (meta?.resetting) return this.clearLog()
    const fresh = this.backend.publishedFsn === 0n && this.backend.ackedFsn === 0n
    if (meta === undefined || fresh) await this.newEpoch()
    else this.epochValue = meta.epoch
    const last = await this.findLastCommitted()
    if (last === undefined && this.backend.publishedFsn > this.backend.ackedFsn) {
      // Only the frames of a commit cut short follow the watermark: ack them so their files can go.
      await this.backend.ack(this.backend.publishedFsn)
    }
    this.lastCommitted = last === undefined ? await this.positions.load() : last.offset
    this.landedSeq = this.backend.ackedFsn
    this.lastCommittedSeq = last?.seq ?? this.landedSeq
  }

  private async clearLog(): Promise<void> {
    await this.backend.clear()
    await this.positions.save(undefined)
    this.known = []
    this.kept.clear()
    this.lastCommitted = undefined
    this.landedSeq = this.lastCommittedSeq = this.backend.ackedFsn
    await this.newEpoch()
  }

  private async newEpoch(): Promise<void> {
    const meta: WalMeta = { epoch: mintEpoch(), resetting: false }
    await this.backend.writeMeta(meta)
    this.epochValue = meta.epoch
  }

  /**
   * The newest complete batch after the watermark, found from the log's end: a batch frame is one; a data
   * frame with index i skips back over its unfinished batch to the frame before it.
   */
  private async findLastCommitted(): Promise<BatchMark | undefined> {
    let fsn = this.backend.publishedFsn
    while (fsn > this.backend.ackedFsn) {
      const payload = await this.readFrame(fsn)
      const frame = decodeFrame(payload, this.where(fsn))
      if (frame.kind === 'batch') return { epoch: frame.epoch, seq: fsn, offset: frame.offset }
      fsn -= BigInt(frame.index) + 1n
    }
    return undefined
  }

  /** The batches after FSN `previous`, read from the log. */
  private async *readBatches(previous: bigint): AsyncGenerator<WalBatch> {
    const assembler = this.assembler()
    for await (const { fsn, payload } of this.backend.read(previous + 1n)) {
      const batch = assembler.push(fsn, payload)
      if (batch !== undefined) yield batch
    }
  }

  /** The oldest unlanded batch, read from the log (when pending() did not show it to us). */
  private async readHead(): Promise<BatchMark | undefined> {
    for await (const batch of this.readBatches(this.backend.ackedFsn))
      return { epoch: batch.id.epoch, seq: batch.id.seq, offset: batch.offset }
    return undefined
  }

  private async readFrame(fsn: bigint): Promise<Uint8Array> {
    for await (const frame of this.backend.read(fsn)) {
      if (frame.fsn === fsn) return frame.payload
      break
    }
    throw new WalCorruptError(this.where(fsn), 'a published frame could not be read back')
  }

  /** Keeps `known` a consecutive run from the watermark: add a batch only right after its last entry. */
  private remember(previousSeq: bigint, batch: WalBatch): void {
    const last = this.known[this.known.length - 1]
    const follows = last === undefined ? previousSeq === this.backend.ackedFsn : last.seq === previousSeq
    if (follows && this.known.length < KNOWN_BATCHES_MAX) {
      this.known.push({ epoch: batch.id.epoch, seq: batch.id.seq, offset: batch.offset })
    }
  }

  /**
   * Appends one frame of a batch. At the cap it waits for a landing to free room and tries again; where
   * no landing can (nothing lands, or every committed batch has landed) it fails with WAL_FULL.
   */
  private async appendWhenRoom(
    frame: Uint8Array[],
    batch: { readonly bytes: number; readonly firstFsn: bigint | undefined },
    options: CommitOptions,
  ): Promise<bigint> {
    for (;;) {
      const landed = this.landedCount
      try {
        return await this.backend.append(frame)
      } catch (e) {
        if ((e as { code?: unknown }).code !== 'SF_BACKPRESSURE') throw e
      }
      this.throwIfClosed()
      if (this.landedCount !== landed) continue
      if (this.whenFull === 'fail') {
        throw this.fullError(
          'nothing lands its batches',
          'give the pipeline a data_sink, raise WAL_MAX_TOTAL_BYTES (or wal_max_total_bytes), or RESET PIPELINE',
        )
      }
      if (this.landedSeq >= this.lastCommittedSeq) {
        // Every committed batch has landed: only frames of commits cut short can go before this batch.
        const orphansEnd = (batch.firstFsn ?? this.backend.publishedFsn + 1n) - 1n
        if (orphansEnd > this.backend.ackedFsn) {
          await this.backend.ack(orphansEnd)
          continue
        }
        throw this.fullError(
          `a batch of ${formatBytes(batch.bytes)} does not fit even with every batch landed`,
          'raise WAL_MAX_TOTAL_BYTES (or wal_max_total_bytes), or lower BUFFER_THRESHOLD_BYTES',
        )
      }
      options.onFull?.()
      await this.roomFreed(options.signal)
    }
  }

  private fullError(why: string, fix: string): WalFullError {
    return new WalFullError(
      `the WAL of pipeline '${this.pipeline}' in ${this.backend.location} reached WAL_MAX_TOTAL_BYTES ` +
        `(${formatBytes(this.maxTotalBytes)}) and ${why}`,
      fix,
    )
  }

  /** Resolves at the next landing (or close); rejects with the signal's reason when it aborts first. */
  private roomFreed(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const landed = (): void => {
        signal?.removeEventListener('abort', aborted)
        resolve()
      }
      const aborted = (): void => {
        this.roomWaiters.delete(landed)
        reject(signal?.reason)
      }
      this.roomWaiters.add(landed)
      signal?.addEventListener('abort', aborted, { once: true })
    })
  }

  private wakeRoomWaiters(): void {
    const waiters = [...this.roomWaiters]
    this.roomWaiters.clear()
    for (const wake of waiters) wake()
  }

  private armSealTimer(): void {
    if (this.sealTimer !== undefined) return
    this.sealTimer = setTimeout(() => {
      this.sealTimer = undefined
      // A seal that fails stopped the slot (fail-stop): the next commit reports the error.
      void this.serial('commits', () => this.backend.seal()).catch(() => {})
    }, this.maxDelayMs)
    this.sealTimer.unref()
  }

  private assembler(): BatchAssembler {
    return new BatchAssembler(this.pipeline, (fsn) => this.where(fsn))
  }

  private where(fsn: bigint): string {
    return `${this.backend.location} frame ${fsn}`
  }

  /** Runs `task` after every earlier task of the same queue; a failure does not block later tasks. */
  private serial<T>(queue: 'commits' | 'landings', task: () => Promise<T>): Promise<T> {
    const run = this[queue].then(task, task)
    this[queue] = run.catch(() => {})
    return run
  }

  private throwIfClosed(): void {
    if (this.closed) throw new WalClosedError(this.pipeline)
  }
}

/** A committed batch as pending() would read it back: each part's pieces joined into one body of its own. */
function keptBatch(id: BatchIdentity, committedAt: number, batch: BatchInput): WalBatch {
  const parts = batch.parts.map(({ body, ...part }) => ({
    ...part,
    body: Buffer.concat(Array.isArray(body) ? body : [body]),
  }))
  return { id, committedAt, offset: batch.offset, parts }
}

function bodyBytes(body: Uint8Array | readonly Uint8Array[]): number {
  if (body instanceof Uint8Array) return body.length
  let bytes = 0
  for (const piece of body) bytes += piece.length
  return bytes
}

function describe(id: BatchIdentity): string {
  return `${id.pipeline}/${id.epoch}/${id.seq}`
}
