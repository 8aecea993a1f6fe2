/**
 * The pipeline write-ahead log. A batch is committed when its batch frame is durable; it is landed when
 * markLanded() moved the ack watermark to that frame. Its identity is { pipeline, epoch, seq } where seq is
 * the FSN of its batch frame: FSNs never repeat while the log exists, a fresh log (FSN 1 again) gets a fresh
 * epoch, and ack(seq) lands exactly this batch and everything before it.
 *
 * Resume offset invariant: the last committed batch's offset while the log holds a batch after the
 * watermark; otherwise `positions`, which markLanded() writes before it acks (and so before anything can
 * be trimmed). So the position never falls behind a landed batch, and never passes a committed one.
 */
import { BatchAssembler } from './assemble.js'
import { openBackend, type WalBackend, type WalMeta } from './backend.js'
import { WalClosedError, WalCorruptError, WalLandOrderError } from './errors.js'
import { decodeFrame, encodeBatchFrames, mintEpoch } from './frame.js'
import { DEFAULT_MAX_DELAY_SECONDS, parseStorage, resolveWalSettings } from './settings.js'
import type { BatchIdentity, BatchInput, Offset, ResumePositions, WalBatch } from './types.js'

export interface WalOptions {
  readonly pipeline: string
  /** The pipeline's data directory (`data_dir`, else DATA_DIR, else ./data); the log is under `wal/`. */
  readonly dataDir: string
  /** WAL_STORAGE: `disk` (default); `s3` and `clustered` are not in this build. */
  readonly storage?: string
  /** Target size of one WAL file (WAL_BYTES_PER_FILE); a larger batch spans several. */
  readonly bytesPerFile?: number
  /** Seal a WAL file this long after its first write even if it is not full (WAL_MAX_DELAY_SECONDS). */
  readonly maxDelaySeconds?: number
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

interface BatchMark {
  readonly epoch: string
  readonly seq: bigint
  readonly offset: Offset | undefined
}

export async function openWal(options: WalOptions): Promise<Wal> {
  const storage = parseStorage(options.storage)
  const bytesPerFile = options.bytesPerFile ?? resolveWalSettings({ env: {} }).bytesPerFile
  const backend = await openBackend(storage, { ...options, bytesPerFile })
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

  /** @internal use openWal() */
  constructor(
    options: WalOptions,
    private readonly backend: WalBackend,
  ) {
    this.pipeline = options.pipeline
    this.positions = options.positions
    this.maxDelayMs = (options.maxDelaySeconds ?? DEFAULT_MAX_DELAY_SECONDS) * 1000
    this.keepBatches = options.keepBatches ?? 0
  }

  /** The epoch new batches get. */
  get epoch(): string {
    return this.epochValue
  }

  /** Stores the batch durably; resolves with its identity once it survives a crash. Commits run in order. */
  async commit(batch: BatchInput): Promise<BatchIdentity> {
    this.throwIfClosed()
    return this.serial('commits', async () => {
      let seq = 0n
      let firstFsn: bigint | undefined
      const frames = encodeBatchFrames(this.epochValue, batch, this.backend.maxFrameBytes)
      for (const frame of frames) {
        seq = await this.backend.append(frame)
        firstFsn ??= seq
      }
      this.lastCommitted = batch.offset
      this.armSealTimer()
      const id = { pipeline: this.pipeline, epoch: this.epochValue, seq }
      if (firstFsn !== undefined && this.kept.size < this.keepBatches)
        this.kept.set(firstFsn, keptBatch(id, batch))
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
  }

  private async clearLog(): Promise<void> {
    await this.backend.clear()
    await this.positions.save(undefined)
    this.known = []
    this.kept.clear()
    this.lastCommitted = undefined
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
function keptBatch(id: BatchIdentity, batch: BatchInput): WalBatch {
  const parts = batch.parts.map(({ body, ...part }) => ({
    ...part,
    body: Buffer.concat(Array.isArray(body) ? body : [body]),
  }))
  return { id, offset: batch.offset, parts }
}

function describe(id: BatchIdentity): string {
  return `${id.pipeline}/${id.epoch}/${id.seq}`
}
