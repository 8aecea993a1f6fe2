/**
 * A read-only view of a pipeline's pending batches for another process — `skipprd query` and
 * `skipprd df` — while a sync may be writing the same WAL. It takes neither the storage's lock nor
 * the writer lease and writes nothing; the writer cannot notice it. It reads through the backend's
 * snapshot view (`WalBackendType.openSnapshot`) and uses the same batch assembly as `Wal.pending()`.
 *
 * It sees a consistent snapshot: every batch committed after the last landed one, in commit order,
 * up to the last whole batch when the read reaches the log's end. A batch still being committed is
 * never seen in part (its batch frame is what makes it whole), and batches landed and trimmed while
 * it reads do not disturb it (the backend's `WalLogSnapshot` keeps that promise). The epoch is read
 * before and after the log, so it is the epoch of the batches seen; while a reset is under way the
 * snapshot is empty.
 */
import { BatchAssembler } from './assemble.js'
import type { WalBackendType, WalLogSnapshot } from './backend.js'
import { diskWal } from './disk.js'
import type { WalBatch } from './types.js'

/** A reset rewrites the metadata twice in quick succession; a reader that keeps seeing it change waits it out. */
const MAX_ATTEMPTS = 20

export interface WalSnapshotOptions {
  readonly pipeline: string
  /** The pipeline's data directory, as given to openWal(). */
  readonly dataDir: string
  /** The storage the pipeline's WAL is in, as given to openWal() (default `diskWal`). */
  readonly backend?: WalBackendType
}

export interface WalSnapshot {
  readonly pipeline: string
  /** The epoch of the batches in the snapshot; undefined for a pipeline whose WAL was never opened. */
  readonly epoch: string | undefined
  /**
   * Seq of the last landed batch (0 when none landed): the snapshot holds the batches after it. It may
   * rise while batches() reads: a WAL file trimmed and reused under the reader means the batches in it,
   * and maybe some after them, landed meanwhile, and batches() steps over them.
   */
  readonly landedSeq: bigint
  /**
   * The pending batches, oldest first, one at a time; with `afterSeq` only those after that seq,
   * which must be the seq of a batch an earlier snapshot of the same epoch returned (the log up to
   * it is stepped over unread). Read it once; it closes the snapshot.
   */
  batches(afterSeq?: bigint): AsyncGenerator<WalBatch>
  /** Releases the snapshot's files without reading (batches() does it when it ends). */
  close(): Promise<void>
}

export async function openWalSnapshot(options: WalSnapshotOptions): Promise<WalSnapshot> {
  const source = await (options.backend ?? diskWal).openSnapshot(options)
  for (let attempt = 1; ; attempt++) {
    const before = await source.readMeta()
    const log = await source.openLog()
    const after = await source.readMeta()
    if (before?.epoch === after?.epoch && !before?.resetting && !after?.resetting) {
      return new Snapshot(options.pipeline, source.location, after?.epoch, log)
    }
    await log.close()
    // Still resetting (or a reset that died half-way, finished by the writer's next open): nothing is pending.
    if (attempt === MAX_ATTEMPTS)
      return new Snapshot(options.pipeline, source.location, after?.epoch, undefined)
  }
}

class Snapshot implements WalSnapshot {
  constructor(
    readonly pipeline: string,
    private readonly location: string,
    readonly epoch: string | undefined,
    /** Undefined: a reset is under way, nothing is pending. */
    private readonly log: WalLogSnapshot | undefined,
  ) {}

  get landedSeq(): bigint {
    return this.log?.ackedFsn ?? 0n
  }

  async *batches(afterSeq?: bigint): AsyncGenerator<WalBatch> {
    if (this.log === undefined) return
    const assembler = new BatchAssembler(this.pipeline, (fsn) => `${this.location} frame ${fsn}`)
    const from = afterSeq === undefined ? undefined : afterSeq + 1n
    for await (const { fsn, payload } of this.log.frames(from)) {
      const batch = assembler.push(fsn, payload)
      if (batch !== undefined) yield batch
    }
  }

  async close(): Promise<void> {
    await this.log?.close()
  }
}
