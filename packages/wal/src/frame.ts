/**
 * The WAL batch frame format, version 2: pure codecs, no I/O. Each frame is the payload of one slot frame
 * (the slot adds length and CRC32C). Integers are little-endian, like the slot's own format.
 *
 *   prefix (12 bytes)   0 magic "SKWB" | 4 u8 version (2) | 5 u8 kind | 6 u16 reserved (0) | 8 u32 n
 *   batch (kind 1)      n = frames in the batch, this one included (the n-1 data frames right before it)
 *                       12 u32 H | 16 H header bytes | 16+H body tail
 *   header              u8[8] epoch | u64 commit time (ms since 1970, UTC) | u32 L | L bytes offset JSON
 *                       (L = 0: no offset) | u16 P |
 *                       P × (u16 N | N bytes namespace | u32 schemaVersion | u8 format (1 csv, 2 jsonl) |
 *                            u32 rows | u64 body length)
 *   data (kind 2)       n = index of this frame in its batch (0-based) | 12 body bytes
 *
 * The part bodies, concatenated in part order, are the data frames' bytes followed by the batch frame's
 * tail, so commit hands the bodies to the slot as they are (a frame is a list of pieces) and a reader of a
 * one-frame batch gets views into the frame.
 * A batch frame is what commits a batch: data frames not followed by their batch frame (a crash
 * mid-commit) belong to no batch.
 *
 * Version 1, written before commit times were kept, is version 2 without the commit time; it is still
 * read (its batches have none), so a WAL left by an older skipprd lands after an upgrade.
 */
import { WalBatchInvalidError, WalCorruptError, WalFormatUnsupportedError } from './errors.js'
import type { BatchInput, BatchPart, Offset, PartInput, RecordFormat } from './types.js'

export const FORMAT_VERSION = 2
/** The version before the commit time: read, never written. */
const VERSION_WITHOUT_COMMIT_TIME = 1
export const PREFIX_BYTES = 12
const BATCH_FIXED_BYTES = 16
const MAGIC = 0x42574b53 // "SKWB" read as a little-endian u32
const KIND_BATCH = 1
const KIND_DATA = 2
const FORMAT_CODES: Record<RecordFormat, number> = { csv: 1, jsonl: 2 }
const FORMATS_BY_CODE: readonly (RecordFormat | undefined)[] = [undefined, 'csv', 'jsonl']
const EPOCH_BYTES = 8
const COMMIT_TIME_BYTES = 8
const EPOCH_PATTERN = /^[0-9a-f]{16}$/
const U32_MAX = 0xffffffff

/** A batch frame's header and the tail of the part bodies it carries. */
export interface BatchFrame {
  readonly kind: 'batch'
  readonly frames: number
  readonly epoch: string
  /** When the batch was committed (ms since 1970, the committing process's clock); absent in version 1. */
  readonly committedAt: number | undefined
  readonly offset: Offset | undefined
  readonly parts: readonly PartHeader[]
  readonly tail: Uint8Array
}

export interface DataFrame {
  readonly kind: 'data'
  readonly index: number
  readonly body: Uint8Array
}

export type Frame = BatchFrame | DataFrame

export type PartHeader = Omit<BatchPart, 'body'> & { readonly bodyLength: number }

/**
 * The frames of one batch committed at `committedAt` (ms since 1970), each at most `maxFrameBytes`, in
 * append order (data frames, then the batch frame). Each frame is a list of pieces, its bytes back to
 * back: a small encoded head, then views into the part bodies, which are never copied here.
 */
export function* encodeBatchFrames(
  epoch: string,
  batch: BatchInput,
  maxFrameBytes: number,
  committedAt: number,
): Generator<Uint8Array[]> {
  const header = encodeHeader(epoch, committedAt, batch)
  const bodies = batch.parts.flatMap(pieces)
  let remaining = bodies.reduce((sum, b) => sum + b.length, 0)
  const tailRoom = maxFrameBytes - BATCH_FIXED_BYTES - header.length
  if (tailRoom < 0) {
    throw new WalBatchInvalidError(
      `its header (offset and part names) takes ${header.length} bytes, more than a WAL frame holds ` +
        `(${maxFrameBytes}); shorten the source offset`,
    )
  }
  const dataRoom = maxFrameBytes - PREFIX_BYTES
  const cursor = new BodyCursor(bodies)
  let index = 0
  while (remaining > tailRoom) {
    const take = Math.min(dataRoom, remaining)
    const prefix = Buffer.allocUnsafe(PREFIX_BYTES)
    writePrefix(prefix, KIND_DATA, index++)
    remaining -= take
    yield [prefix, ...cursor.take(take)]
  }
  const head = Buffer.allocUnsafe(BATCH_FIXED_BYTES + header.length)
  writePrefix(head, KIND_BATCH, index + 1)
  head.writeUInt32LE(header.length, PREFIX_BYTES)
  header.copy(head, BATCH_FIXED_BYTES)
  yield [head, ...cursor.take(remaining)]
}

/** Decodes one frame; `where` names it in errors (e.g. the slot and FSN). Bodies are views, not copies. */
export function decodeFrame(payload: Uint8Array, where: string): Frame {
  const b = Buffer.from(payload.buffer, payload.byteOffset, payload.length)
  if (b.length < PREFIX_BYTES || b.readUInt32LE(0) !== MAGIC) {
    throw new WalCorruptError(where, 'not a WAL batch frame (bad magic)')
  }
  const version = b[4]!
  if (version !== FORMAT_VERSION && version !== VERSION_WITHOUT_COMMIT_TIME)
    throw new WalFormatUnsupportedError(version, FORMAT_VERSION)
  const kind = b[5]
  const n = b.readUInt32LE(8)
  if (kind === KIND_DATA) return { kind: 'data', index: n, body: b.subarray(PREFIX_BYTES) }
  if (kind !== KIND_BATCH) throw new WalCorruptError(where, `unknown frame kind ${kind}`)
  try {
    return decodeBatchFrame(b, n, version === FORMAT_VERSION)
  } catch (e) {
    // Only RangeError (bounds) and SyntaxError (offset JSON) come from a damaged header.
    throw new WalCorruptError(where, `unreadable batch header (${(e as Error).message})`)
  }
}

/** Splits a batch's concatenated bodies into its parts (views into `body`). */
export function splitParts(parts: readonly PartHeader[], body: Uint8Array, where: string): BatchPart[] {
  const total = parts.reduce((sum, p) => sum + p.bodyLength, 0)
  if (total !== body.length) {
    throw new WalCorruptError(where, `parts declare ${total} body bytes, the frames hold ${body.length}`)
  }
  let at = 0
  return parts.map(({ bodyLength, ...meta }) => {
    const part = { ...meta, body: body.subarray(at, at + bodyLength) }
    at += bodyLength
    return part
  })
}

/** A fresh random epoch: 8 random bytes as 16 lowercase hex digits. */
export function mintEpoch(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(EPOCH_BYTES))).toString('hex')
}

export function isEpoch(value: string): boolean {
  return EPOCH_PATTERN.test(value)
}

function decodeBatchFrame(b: Buffer, frames: number, hasCommitTime: boolean): BatchFrame {
  const headerLength = b.readUInt32LE(PREFIX_BYTES)
  const tailAt = BATCH_FIXED_BYTES + headerLength
  if (tailAt > b.length) throw new RangeError(`header length ${headerLength} past the frame end`)
  let at = BATCH_FIXED_BYTES
  const epoch = b.toString('hex', at, at + EPOCH_BYTES)
  at += EPOCH_BYTES
  const committedAt = hasCommitTime ? Number(b.readBigUInt64LE(at)) : undefined
  if (hasCommitTime) at += COMMIT_TIME_BYTES
  const offsetLength = b.readUInt32LE(at)
  at += 4
  const offset = offsetLength === 0 ? undefined : JSON.parse(utf8(b, at, offsetLength))
  at += offsetLength
  const count = b.readUInt16LE(at)
  at += 2
  const parts: PartHeader[] = []
  for (let i = 0; i < count; i++) {
    const nameLength = b.readUInt16LE(at)
    const namespace = utf8(b, at + 2, nameLength)
    at += 2 + nameLength
    const format = FORMATS_BY_CODE[b.readUInt8(at + 4)]
    if (format === undefined) throw new RangeError(`unknown record format code ${b[at + 4]}`)
    parts.push({
      namespace,
      schemaVersion: b.readUInt32LE(at),
      format,
      rows: b.readUInt32LE(at + 5),
      bodyLength: Number(b.readBigUInt64LE(at + 9)),
    })
    at += 17
  }
  if (at !== tailAt)
    throw new RangeError(`header holds ${at - BATCH_FIXED_BYTES} bytes, declares ${headerLength}`)
  return { kind: 'batch', frames, epoch, committedAt, offset, parts, tail: b.subarray(tailAt) }
}

function utf8(b: Buffer, at: number, length: number): string {
  if (at + length > b.length) throw new RangeError(`string of ${length} bytes past the frame end`)
  return b.toString('utf8', at, at + length)
}

function encodeHeader(epoch: string, committedAt: number, batch: BatchInput): Buffer {
  if (!isEpoch(epoch)) throw new WalBatchInvalidError(`epoch '${epoch}' is not 16 hex digits`)
  if (!Number.isSafeInteger(committedAt) || committedAt < 0)
    throw new WalBatchInvalidError(`commit time ${committedAt} is not a whole number of ms since 1970`)
  const offsetJson = batch.offset === undefined ? '' : offsetToJson(batch.offset)
  if (batch.parts.length > 0xffff)
    throw new WalBatchInvalidError(`${batch.parts.length} parts, at most 65535`)
  const names = batch.parts.map((p) => Buffer.from(validPart(p).namespace, 'utf8'))
  const offsetBytes = Buffer.from(offsetJson, 'utf8')
  let length = EPOCH_BYTES + COMMIT_TIME_BYTES + 4 + offsetBytes.length + 2
  for (const name of names) length += 2 + name.length + 17
  const h = Buffer.allocUnsafe(length)
  let at = h.write(epoch, 0, 'hex')
  at = h.writeBigUInt64LE(BigInt(committedAt), at)
  at = h.writeUInt32LE(offsetBytes.length, at)
  at += offsetBytes.copy(h, at)
  at = h.writeUInt16LE(batch.parts.length, at)
  batch.parts.forEach((part, i) => {
    const name = names[i]!
    at = h.writeUInt16LE(name.length, at)
    at += name.copy(h, at)
    at = h.writeUInt32LE(part.schemaVersion, at)
    at = h.writeUInt8(FORMAT_CODES[part.format], at)
    at = h.writeUInt32LE(part.rows, at)
    at = h.writeBigUInt64LE(BigInt(pieces(part).reduce((sum, b) => sum + b.length, 0)), at)
  })
  return h
}

function offsetToJson(offset: Offset): string {
  let json: string | undefined
  try {
    json = JSON.stringify(offset)
  } catch (e) {
    throw new WalBatchInvalidError(`the offset is not JSON-serialisable (${(e as Error).message})`)
  }
  if (json === undefined) throw new WalBatchInvalidError('the offset is not JSON-serialisable')
  return json
}

function pieces(part: PartInput): readonly Uint8Array[] {
  return part.body instanceof Uint8Array ? [part.body] : part.body
}

function validPart(part: PartInput): PartInput {
  const what = `part '${part.namespace}'`
  if (typeof part.namespace !== 'string' || part.namespace === '') {
    throw new WalBatchInvalidError('a part has an empty namespace')
  }
  if (Buffer.byteLength(part.namespace) > 0xffff)
    throw new WalBatchInvalidError(`${what}: namespace too long`)
  if (!isU32(part.schemaVersion))
    throw new WalBatchInvalidError(`${what}: schemaVersion must be 0..${U32_MAX}`)
  if (!isU32(part.rows)) throw new WalBatchInvalidError(`${what}: rows must be 0..${U32_MAX}`)
  if (FORMAT_CODES[part.format] === undefined) {
    throw new WalBatchInvalidError(`${what}: format '${part.format}' is not csv or jsonl`)
  }
  if (!pieces(part).every((b) => b instanceof Uint8Array)) {
    throw new WalBatchInvalidError(`${what}: body must be a Uint8Array or an array of them`)
  }
  return part
}

function isU32(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= U32_MAX
}

function writePrefix(frame: Buffer, kind: number, n: number): void {
  frame.writeUInt32LE(MAGIC, 0)
  frame[4] = FORMAT_VERSION
  frame[5] = kind
  frame.writeUInt16LE(0, 6)
  frame.writeUInt32LE(n, 8)
}

/** Copies consecutive ranges of the part bodies, as if they were one concatenated buffer. */
class BodyCursor {
  private part = 0
  private at = 0
  constructor(private readonly bodies: readonly Uint8Array[]) {}

  /** The next `length` body bytes, as views. */
  take(length: number): Uint8Array[] {
    const views: Uint8Array[] = []
    let left = length
    while (left > 0) {
      const body = this.bodies[this.part]!
      const take = Math.min(left, body.length - this.at)
      views.push(body.subarray(this.at, this.at + take))
      left -= take
      this.at += take
      if (this.at === body.length) {
        this.part++
        this.at = 0
      }
    }
    return views
  }
}
