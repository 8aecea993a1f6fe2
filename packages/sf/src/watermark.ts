/**
 * `.ack-watermark`: the cumulative acked FSN, 16 self-checking bytes (see format.ts). It is replaced with
 * write-temp + fdatasync + rename + directory fsync, so after a crash the file holds the old or the new
 * value, never a mix; a damaged file fails its CRC and is ignored with a warning.
 *
 * It also keeps FSNs moving forward: when acks drained every segment, the watermark is the only record of
 * the last FSN used, and the next frame continues after it.
 */
import path from 'node:path'
import { decodeWatermark, encodeWatermark } from './format.js'
import { readSmallFile, replaceFileDurably, type SlotFs } from './io.js'

export const WATERMARK_FILE = '.ack-watermark'

export type WatermarkRead = { fsn: bigint } | { corrupt: string } | undefined

export async function readWatermark(io: SlotFs, dir: string): Promise<WatermarkRead> {
  const bytes = await readSmallFile(io, path.join(dir, WATERMARK_FILE))
  if (bytes === undefined) return undefined
  const fsn = decodeWatermark(bytes)
  return typeof fsn === 'string' ? { corrupt: fsn } : { fsn }
}

export function writeWatermark(io: SlotFs, dir: string, fsn: bigint): Promise<void> {
  return replaceFileDurably(io, dir, WATERMARK_FILE, encodeWatermark(fsn))
}
