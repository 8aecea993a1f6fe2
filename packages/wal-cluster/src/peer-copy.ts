/**
 * A peer's copy of one pipeline's log: a local WAL storage (the disk backend by default) in the peer's
 * data directory, plus the cluster record (cluster-record.ts) that gives each local frame the FSN the
 * leader gave it.
 *
 * Invariants:
 *  1. The copy is always a run of the leader's log of generation `logId`: frames base+1 … published, each
 *     at the leader's FSN with the leader's bytes. A frame is taken only as the next one (published + 1),
 *     after it is durable locally the peer says so (DURABLE), never before.
 *  2. A frame at an FSN the copy holds with another CRC (a divergent tail, e.g. of an old leader), a gap,
 *     a tail the leader does not have, or another log generation: the copy is dropped whole and the
 *     leader streams its unlanded frames again (the resync rule). The record says `base: null` before the
 *     local log is cleared, so a crash in between finishes the drop on the next open.
 *  3. The fencing token in the record only rises, and is durable before a session under it is taken.
 *
 * Operations run one at a time (one chain per copy), whichever connection asked.
 */
import {
  type BackendOptions,
  diskWal,
  type WalBackend,
  type WalBackendType,
  type WalFrame,
  type WalMeta,
} from '@skippr/wal'
import { type ClusterRecord, readRecord, recordPath, writeRecord } from './cluster-record.js'
import { payloadCrc } from './protocol.js'

export interface PeerCopyOptions extends Omit<BackendOptions, 'keepFreeBytes' | 'keepFreeBatches'> {
  readonly storage: WalBackendType
}

/** What happened to one frame sent to the copy. */
export type Accepted = 'stored' | 'held' | 'diverged'

export class PeerCopy {
  private chain: Promise<unknown> = Promise.resolve()
  /** CRC32C of every frame after the ack watermark, by FSN: what a repeated frame is compared with. */
  private readonly crcs = new Map<bigint, number>()

  private constructor(
    private readonly file: string,
    private record: ClusterRecord,
    private readonly log: WalBackend,
  ) {}

  static async open(options: PeerCopyOptions): Promise<PeerCopy> {
    const log = await options.storage.open({ ...options, keepFreeBytes: 0, keepFreeBatches: 0 })
    try {
      const file = recordPath(options.dataDir, options.pipeline)
      const copy = new PeerCopy(file, await readRecord(file), log)
      await copy.recover()
      return copy
    } catch (e) {
      await log.close()
      throw e
    }
  }

  /** Runs `op` after every operation asked for before it. */
  run<T>(op: () => Promise<T>): Promise<T> {
    const next = this.chain.then(op)
    this.chain = next.catch(() => {})
    return next
  }

  get token(): bigint {
    return this.record.token
  }

  /** The last FSN the copy holds durably; undefined while it waits for its first frame. */
  get publishedFsn(): bigint | undefined {
    return this.record.base === null ? undefined : this.record.base + this.log.publishedFsn
  }

  private get ackedFsn(): bigint {
    return (this.record.base ?? 0n) + this.log.ackedFsn
  }

  /** Takes `token` as the highest seen; false, and nothing changes, when an older one was seen. */
  async fence(token: bigint): Promise<boolean> {
    if (token < this.record.token) return false
    if (token > this.record.token) await this.rewrite({ ...this.record, token })
    return true
  }

  /** A new session: drops the copy if it cannot be a run of the leader's log as the HELLO states it. */
  async begin(logId: string, oldestFsn: bigint, publishedFsn: bigint): Promise<void> {
    const published = this.publishedFsn
    if (
      this.record.logId !== logId ||
      (published !== undefined && (published > publishedFsn || published < oldestFsn - 1n))
    ) {
      await this.drop(logId)
      return
    }
    await this.land(oldestFsn - 1n)
  }

  /** Invariant 1 and 2 for one frame. */
  async accept(fsn: bigint, payload: Uint8Array): Promise<Accepted> {
    const published = this.publishedFsn
    if (published !== undefined && fsn <= published) {
      if (fsn <= this.ackedFsn || this.crcs.get(fsn) === payloadCrc(payload)) return 'held'
      await this.drop(this.record.logId)
      return 'diverged'
    }
    if (published === undefined) await this.rewrite({ ...this.record, base: fsn - 1n })
    else if (fsn !== published + 1n) {
      await this.drop(this.record.logId)
      return 'diverged'
    }
    const local = await this.log.append(payload)
    this.crcs.set(fsn, payloadCrc(payload))
    if (this.record.base! + local !== fsn) throw new Error(`peer copy stored FSN ${fsn} at local ${local}`)
    return 'stored'
  }

  /** The leader's ack watermark, as far as the copy holds frames. */
  async land(fsn: bigint): Promise<void> {
    const published = this.publishedFsn
    if (published === undefined) return
    const upTo = fsn < published ? fsn : published
    if (upTo <= this.ackedFsn) return
    await this.log.ack(upTo - this.record.base!)
    for (const key of this.crcs.keys()) if (key <= upTo) this.crcs.delete(key)
  }

  writeMeta(meta: WalMeta): Promise<void> {
    return this.log.writeMeta(meta)
  }

  /** The copy's frames after its watermark, at the leader's FSNs. */
  async *frames(): AsyncIterable<WalFrame> {
    const base = this.record.base
    if (base === null) return
    for await (const frame of this.log.read(this.log.ackedFsn + 1n))
      yield { fsn: base + frame.fsn, payload: frame.payload }
  }

  close(): Promise<void> {
    return this.log.close()
  }

  /** Finishes a drop a crash interrupted (invariant 2) and learns the CRCs of the frames held. */
  private async recover(): Promise<void> {
    if (this.record.base === null) {
      if (this.log.publishedFsn > 0n) await this.log.clear()
      return
    }
    for await (const frame of this.frames()) this.crcs.set(frame.fsn, payloadCrc(frame.payload))
  }

  private async drop(logId: string | null): Promise<void> {
    await this.rewrite({ ...this.record, logId, base: null })
    await this.log.clear()
    this.crcs.clear()
  }

  private async rewrite(record: ClusterRecord): Promise<void> {
    await writeRecord(this.file, record)
    this.record = record
  }
}

/**
 * The frames a peer's copy in `dataDir` holds after its watermark, at the leader's FSNs, read through the
 * storage's lock-free snapshot view (the peer may be running): for checks that compare copies.
 */
export async function readPeerCopy(
  dataDir: string,
  pipeline: string,
  storage: WalBackendType = diskWal,
): Promise<WalFrame[]> {
  const { base } = await readRecord(recordPath(dataDir, pipeline))
  if (base === null) return []
  const view = await (await storage.openSnapshot({ pipeline, dataDir })).openLog()
  const out: WalFrame[] = []
  for await (const frame of view.frames())
    out.push({ fsn: base + frame.fsn, payload: Uint8Array.from(frame.payload) })
  return out
}
