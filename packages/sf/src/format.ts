/**
 * On-disk encodings of the slot, as pure functions over bytes. All integers are little-endian.
 *
 *   segment header (32 bytes)   0 magic "SKSF" | 4 u16 version | 6 u16 flags | 8 u64 baseSeq (FSN of the
 *                               first frame) | 16 u64 creation time (ms since epoch) | 24 u32 staleEnd |
 *                               28 u32 CRC32C of bytes 0..28
 *   frame (8 + n bytes)         0 u32 CRC32C over the segment's baseSeq (u64) then bytes 4..8+n of the
 *                               frame | 4 u32 n | 8 n bytes payload
 *   seal (last 32 bytes of a    0 magic "SKSL" | 4 u32 CRC32C of bytes 8..32 | 8 u64 baseSeq (the header's)
 *     segment file)             | 16 u32 frame count | 20 u32 end of the last frame | 24 u64 reserved (0)
 *   .ack-watermark (16 bytes)   0 magic "SKAW" | 4 u32 CRC32C of bytes 8..16 | 8 u64 acked FSN
 *
 * A region of zero bytes never decodes as a frame: `frameSalt` never yields a salt for which an empty
 * frame's CRC is zero. That is what lets zero-filled preallocation mark the end of data.
 *
 * Segment files are reused: a trimmed segment's file becomes a later segment without being zeroed (that
 * would write as many bytes as the frames do). Its old frames stay after the new end of data and can never
 * pass for new ones, because a frame's CRC covers the baseSeq of the segment it was written for and no two
 * segments of a slot share a baseSeq. `staleEnd` says how far such leftovers may reach (0 in a fresh file),
 * so recovery can tell them from a torn append.
 *
 * Version 2 salted the frame CRC with baseSeq and added staleEnd; version 1 files are not read.
 */
import { crc32c } from '@node-rs/crc32'

export const FORMAT_VERSION = 2
export const SEGMENT_HEADER_BYTES = 32
export const FRAME_HEADER_BYTES = 8
export const WATERMARK_BYTES = 16
export const SEAL_BYTES = 32

const SEGMENT_MAGIC = 0x46534b53 // "SKSF"
const SEAL_MAGIC = 0x4c534b53 // "SKSL"
const WATERMARK_MAGIC = 0x57414b53 // "SKAW"

export interface SegmentHeader {
  version: number
  flags: number
  baseSeq: bigint
  createdAtMs: number
  /** Bytes before this offset may hold frames of the file's previous use (0: a fresh file). */
  staleEnd: number
}

export function encodeSegmentHeader(baseSeq: bigint, createdAtMs: number, staleEnd = 0): Buffer {
  const b = Buffer.alloc(SEGMENT_HEADER_BYTES)
  b.writeUInt32LE(SEGMENT_MAGIC, 0)
  b.writeUInt16LE(FORMAT_VERSION, 4)
  b.writeUInt16LE(0, 6)
  b.writeBigUInt64LE(baseSeq, 8)
  b.writeBigUInt64LE(BigInt(createdAtMs), 16)
  b.writeUInt32LE(staleEnd, 24)
  b.writeUInt32LE(crc32c(b.subarray(0, 28)), 28)
  return b
}

/** The header, or a reason why these bytes are not a valid header. */
export function decodeSegmentHeader(b: Uint8Array): SegmentHeader | string {
  if (b.length < SEGMENT_HEADER_BYTES) return `header truncated to ${b.length} bytes`
  const buf = Buffer.from(b.buffer, b.byteOffset, SEGMENT_HEADER_BYTES)
  if (buf.readUInt32LE(0) !== SEGMENT_MAGIC) return 'bad magic'
  const version = buf.readUInt16LE(4)
  if (version !== FORMAT_VERSION)
    return `unsupported format version ${version} (this reader knows ${FORMAT_VERSION})`
  if (buf.readUInt32LE(28) !== crc32c(buf.subarray(0, 28))) return 'header checksum mismatch'
  return {
    version,
    flags: buf.readUInt16LE(6),
    baseSeq: buf.readBigUInt64LE(8),
    createdAtMs: Number(buf.readBigUInt64LE(16)),
    staleEnd: buf.readUInt32LE(24),
  }
}

const EMPTY_LENGTH = Buffer.alloc(4)

/**
 * The CRC32C state after a segment's baseSeq: every frame CRC of that segment starts from it. For the
 * one baseSeq in 2^32 whose state would give an empty frame a CRC of zero (so that zero fill would read
 * as frames), the state continues over one more byte, 0x01.
 */
export function frameSalt(baseSeq: bigint): number {
  const b = Buffer.allocUnsafe(8)
  b.writeBigUInt64LE(baseSeq, 0)
  const salt = crc32c(b)
  return crc32c(EMPTY_LENGTH, salt) === 0 ? crc32c(Buffer.of(1), salt) : salt
}

/** An all-zero header: a spare segment file, prepared but not started (see recovery.ts). */
export function isBlankHeader(b: Uint8Array): boolean {
  return b.length >= SEGMENT_HEADER_BYTES && b.subarray(0, SEGMENT_HEADER_BYTES).every((x) => x === 0)
}

export function frameBytes(payloadLength: number): number {
  return FRAME_HEADER_BYTES + payloadLength
}

/**
 * Writes the header of a frame with a payload of `length` bytes, without its CRC, into `target` at
 * `offset`; returns the offset after it. The payload follows it on disk, from wherever it is written
 * from. The CRC depends on the segment the frame lands in: `setFrameCrc` sets it once that is known.
 */
export function encodeFrameHeaderInto(target: Buffer, offset: number, length: number): number {
  target.writeUInt32LE(length, offset + 4)
  return offset + FRAME_HEADER_BYTES
}

/**
 * Sets the CRC of the frame whose header is at `offset` in `target`, for a segment with this salt. Its
 * payload is the bytes of `target` from the header to `end`, then the `rest` back to back (pieces
 * written from elsewhere).
 */
export function setFrameCrc(
  target: Buffer,
  offset: number,
  end: number,
  rest: readonly Uint8Array[],
  salt: number,
): void {
  let crc = crc32c(target.subarray(offset + 4, end), salt)
  for (const piece of rest) crc = crc32c(piece, crc)
  target.writeUInt32LE(crc, offset)
}

export function encodeFrame(payload: Uint8Array, salt: number): Buffer {
  const b = Buffer.allocUnsafe(frameBytes(payload.length))
  encodeFrameHeaderInto(b, 0, payload.length)
  b.set(payload, FRAME_HEADER_BYTES)
  setFrameCrc(b, 0, b.length, [], salt)
  return b
}

/** The frame at `offset` extends past the bytes available in the buffer: read more and try again. */
export const FRAME_INCOMPLETE = -1
/** No valid frame starts at `offset`: checksum mismatch, zero fill, or a length past `limit`. */
export const FRAME_INVALID = -2

/**
 * Checks the frame starting at `offset` in `buf`, for a segment with this salt (`frameSalt`). `limit` is
 * how many bytes the frame may span at most (the rest of its segment). Returns the payload length of a
 * valid frame, FRAME_INCOMPLETE or FRAME_INVALID.
 */
export function checkFrame(buf: Buffer, offset: number, end: number, limit: number, salt: number): number {
  if (limit < FRAME_HEADER_BYTES) return FRAME_INVALID
  if (end - offset < FRAME_HEADER_BYTES) return FRAME_INCOMPLETE
  const n = buf.readUInt32LE(offset + 4)
  if (FRAME_HEADER_BYTES + n > limit) return FRAME_INVALID
  if (end - offset < FRAME_HEADER_BYTES + n) return FRAME_INCOMPLETE
  const crc = crc32c(buf.subarray(offset + 4, offset + FRAME_HEADER_BYTES + n), salt)
  return crc === buf.readUInt32LE(offset) ? n : FRAME_INVALID
}

/** What a sealed segment holds: its frame count and where its last frame ends. */
export interface Seal {
  baseSeq: bigint
  count: number
  end: number
}

export function encodeSeal(seal: Seal): Buffer {
  const b = Buffer.alloc(SEAL_BYTES)
  b.writeUInt32LE(SEAL_MAGIC, 0)
  b.writeBigUInt64LE(seal.baseSeq, 8)
  b.writeUInt32LE(seal.count, 16)
  b.writeUInt32LE(seal.end, 20)
  b.writeUInt32LE(crc32c(b.subarray(8, SEAL_BYTES)), 4)
  return b
}

/**
 * The seal in the last SEAL_BYTES of a segment file of `fileBytes` bytes, if these bytes are a valid one
 * for a segment starting at `baseSeq` whose frames fit before the seal; otherwise undefined.
 */
export function decodeSeal(b: Uint8Array, baseSeq: bigint, fileBytes: number): Seal | undefined {
  if (b.length !== SEAL_BYTES) return undefined
  const buf = Buffer.from(b.buffer, b.byteOffset, b.length)
  if (buf.readUInt32LE(0) !== SEAL_MAGIC || buf.readUInt32LE(4) !== crc32c(buf.subarray(8, SEAL_BYTES)))
    return undefined
  const seal = { baseSeq: buf.readBigUInt64LE(8), count: buf.readUInt32LE(16), end: buf.readUInt32LE(20) }
  const plausible =
    seal.baseSeq === baseSeq &&
    seal.end >= SEGMENT_HEADER_BYTES + seal.count * FRAME_HEADER_BYTES &&
    seal.end <= fileBytes - SEAL_BYTES &&
    (seal.count > 0 || seal.end === SEGMENT_HEADER_BYTES)
  return plausible ? seal : undefined
}

export function encodeWatermark(fsn: bigint): Buffer {
  const b = Buffer.alloc(WATERMARK_BYTES)
  b.writeUInt32LE(WATERMARK_MAGIC, 0)
  b.writeBigUInt64LE(fsn, 8)
  b.writeUInt32LE(crc32c(b.subarray(8, 16)), 4)
  return b
}

/** The acked FSN, or a reason why these bytes are not a valid watermark. */
export function decodeWatermark(b: Uint8Array): bigint | string {
  if (b.length !== WATERMARK_BYTES) return `expected ${WATERMARK_BYTES} bytes, found ${b.length}`
  const buf = Buffer.from(b.buffer, b.byteOffset, b.length)
  if (buf.readUInt32LE(0) !== WATERMARK_MAGIC) return 'bad magic'
  if (buf.readUInt32LE(4) !== crc32c(buf.subarray(8, 16))) return 'checksum mismatch'
  return buf.readBigUInt64LE(8)
}

const SEGMENT_NAME = /^sf-([0-9a-f]{16})\.sfa$/

export function segmentFileName(gen: bigint): string {
  return `sf-${gen.toString(16).padStart(16, '0')}.sfa`
}

/** The generation in a segment file name, or undefined for any other name. */
export function parseSegmentFileName(name: string): bigint | undefined {
  const m = SEGMENT_NAME.exec(name)
  return m ? BigInt(`0x${m[1]}`) : undefined
}
