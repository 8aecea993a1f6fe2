/**
 * A local log whose frames carry the cluster's FSNs: local FSN n is the log's FSN base + n (the cluster
 * record's `base`, cluster-record.ts). A leader's own log has base 0; a leader promoted from a peer's copy
 * keeps the copy's base, so it continues the log at the FSN where the copy ends and every frame keeps the
 * FSN the first leader gave it. clear() starts the local log from 1 again, at base 0.
 */
import type { Payload } from '@skippr/sf/slot'
import type { WalBackend, WalFrame, WalLogSnapshot, WalMeta, WalSnapshotSource } from '@skippr/wal'

export class BasedLog implements WalBackend {
  constructor(
    private readonly log: WalBackend,
    private base: bigint,
  ) {}

  get location(): string {
    return this.log.location
  }

  get maxFrameBytes(): number {
    return this.log.maxFrameBytes
  }

  get publishedFsn(): bigint {
    return this.base + this.log.publishedFsn
  }

  get ackedFsn(): bigint {
    return this.base + this.log.ackedFsn
  }

  async append(payload: Payload): Promise<bigint> {
    return this.base + (await this.log.append(payload))
  }

  read(fromFsn: bigint): AsyncIterable<WalFrame> {
    return shifted(this.log.read(local(fromFsn, this.base)), this.base)
  }

  ensureRoom(bytes: number): Promise<void> {
    return this.log.ensureRoom(bytes)
  }

  ack(fsn: bigint): Promise<void> {
    return this.log.ack(fsn - this.base)
  }

  seal(): Promise<void> {
    return this.log.seal()
  }

  readMeta(): Promise<WalMeta | undefined> {
    return this.log.readMeta()
  }

  writeMeta(meta: WalMeta): Promise<void> {
    return this.log.writeMeta(meta)
  }

  async clear(): Promise<void> {
    await this.log.clear()
    this.base = 0n
  }

  close(): Promise<void> {
    return this.log.close()
  }
}

/** The readers' view of a based log; `base()` reads the base as stored when a snapshot is taken. */
export function basedSnapshot(source: WalSnapshotSource, base: () => Promise<bigint>): WalSnapshotSource {
  return {
    location: source.location,
    readMeta: () => source.readMeta(),
    async openLog(): Promise<WalLogSnapshot> {
      const at = await base()
      const view = await source.openLog()
      return {
        get ackedFsn() {
          return at + view.ackedFsn
        },
        frames: (fromFsn) => shifted(view.frames(fromFsn === undefined ? undefined : local(fromFsn, at)), at),
        close: () => view.close(),
      }
    },
  }
}

/** A local FSN for `fsn`; FSNs at or before the base are gone, so a read from one starts at the first kept. */
function local(fsn: bigint, base: bigint): bigint {
  return fsn > base ? fsn - base : 1n
}

async function* shifted(frames: AsyncIterable<WalFrame>, base: bigint): AsyncIterable<WalFrame> {
  for await (const frame of frames) yield { fsn: base + frame.fsn, payload: frame.payload }
}
