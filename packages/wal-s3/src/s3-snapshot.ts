/**
 * The readers' side (`skipprd query`, `df`, `SHOW`): the log as its record says now, read without
 * the writer lease and writing nothing. Frames acked and deleted while it reads are stepped over.
 */
import type { WalLogSnapshot, WalMeta, WalSnapshotSource } from '@skippr/wal'
import type { Bucket } from './bucket.js'
import type { FrameKeys } from './frame-keys.js'
import { publishedFrames, readFrames } from './log-reader.js'
import type { LogRecordStore } from './log-record.js'
import { readRecord } from './s3-backend.js'

export class S3SnapshotSource implements WalSnapshotSource {
  readonly location: string

  constructor(
    private readonly bucket: Bucket,
    private readonly keys: FrameKeys,
    private readonly records: LogRecordStore,
  ) {
    this.location = keys.location(bucket.name)
  }

  async readMeta(): Promise<WalMeta | undefined> {
    return (await readRecord(this.records, this.location))?.record.meta
  }

  async openLog(): Promise<WalLogSnapshot> {
    const record = (await readRecord(this.records, this.location))?.record
    if (record === undefined) return emptyLog
    const frames = await publishedFrames(this.bucket, this.keys, record)
    const ackedNow = async () => (await readRecord(this.records, this.location))?.record.ackedFsn ?? 0n
    return {
      ackedFsn: record.ackedFsn,
      frames: (fromFsn) =>
        readFrames(
          this.bucket,
          fromFsn === undefined ? frames : frames.filter((f) => f.fsn >= fromFsn),
          ackedNow,
        ),
      close: async () => {},
    }
  }
}

const emptyLog: WalLogSnapshot = {
  ackedFsn: 0n,
  async *frames() {},
  close: async () => {},
}
