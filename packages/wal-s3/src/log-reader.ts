/**
 * Reading a log as its record describes it: which FSNs are published, and each frame's object.
 * Shared by the writer (recovery at open) and by readers (the snapshot view).
 */
import type { WalFrame } from '@skippr/wal'
import { WalCorruptError } from '@skippr/wal'
import type { Bucket, ListedObject } from './bucket.js'
import type { FrameKeys } from './frame-keys.js'
import { type LogRecord, writerOf } from './log-record.js'

/** A published frame's object and size. */
export interface FrameObject {
  readonly fsn: bigint
  readonly key: string
  readonly size: number
}

/**
 * The frames after the ack watermark that the record makes visible, in FSN order: each closed
 * writer's up to its `lastFsn`, and the last writer's run of consecutive FSNs from where it
 * started. A frame a fenced-out writer stored after it was closed is not among them.
 */
export async function publishedFrames(
  bucket: Bucket,
  keys: FrameKeys,
  record: LogRecord,
): Promise<FrameObject[]> {
  const listed = await bucket.list(keys.logPrefix(record.log), undefined)
  const byWriter = new Map<string, Map<bigint, ListedObject>>()
  for (const object of listed) {
    const parsed = keys.parse(record.log, object.key)
    if (parsed === undefined || parsed.fsn <= record.ackedFsn) continue
    const frames = byWriter.get(parsed.writer) ?? new Map<bigint, ListedObject>()
    byWriter.set(parsed.writer, frames)
    frames.set(parsed.fsn, object)
  }
  const frames: FrameObject[] = []
  for (let fsn = record.ackedFsn + 1n; ; fsn++) {
    const writer = writerOf(record, fsn)
    const object = writer && byWriter.get(writer.id)?.get(fsn)
    if (writer === undefined || object === undefined) {
      if (writer?.lastFsn !== undefined)
        throw new WalCorruptError(keys.frame(record.log, writer.id, fsn), 'a published frame is missing')
      return frames
    }
    frames.push({ fsn, key: object.key, size: object.size })
  }
}

/**
 * Reads each frame's object in turn, one in memory at a time. A frame gone because it was acked
 * meanwhile (a reader beside the writer) is stepped over when `ackedNow` says so.
 */
export async function* readFrames(
  bucket: Bucket,
  frames: readonly FrameObject[],
  ackedNow?: () => Promise<bigint>,
): AsyncGenerator<WalFrame> {
  let acked = 0n
  for (const frame of frames) {
    if (frame.fsn <= acked) continue
    const payload = await bucket.get(frame.key)
    if (payload !== undefined) {
      yield { fsn: frame.fsn, payload }
      continue
    }
    acked = ackedNow === undefined ? 0n : await ackedNow()
    if (frame.fsn > acked) throw new WalCorruptError(frame.key, 'a published frame is missing')
  }
}
