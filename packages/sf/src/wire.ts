/**
 * The store-and-forward wire protocol, version 2: pure codecs, no I/O.
 *
 * The version is negotiated in the WebSocket handshake as the subprotocol: a sender offers
 * `skippr-sf.v2, skippr-sf.v1`, a receiver picks the highest it speaks. Every message is one binary
 * WebSocket message whose first byte is its type; integers are big-endian.
 *
 *   sender → receiver   HELLO        0x01  u8 flags (bit 0: durable acks wanted, bit 1: slot id follows),
 *                                          u16 n, n bytes sender id, [16 bytes slot id (a UUID)]
 *                       DATA         0x02  u64 first FSN, u32 count, count × (u32 n, n bytes payload)
 *   receiver → sender   WELCOME      0x81  u32 largest DATA message accepted, in bytes
 *                       ACK          0x82  u64 FSN: every frame up to it was handled by the application
 *                       DURABLE_ACK  0x83  u64 FSN: every frame up to it is durable on the receiver side
 *                       ERROR        0x84  u8 category (1 HALT, 2 DROP), u64 FSN (0: none), UTF-8 message
 *
 * Version 2 differs from version 1 only in HELLO's slot id (bit 1, never set on a v1 connection) and in
 * that a receiver may answer HELLO with ERROR HALT instead of WELCOME (the sender id is held by another
 * slot); a v1 peer never sees either.
 *
 * A DATA message carries consecutive FSNs. Within a connection each DATA message starts above the end of
 * the previous one: normally right after it; further only across a range the sender's slot lost (which its
 * recovery reported).
 */
import { WireFormatError } from './errors.js'
import { isSlotId } from './slot-identity.js'

export const PROTOCOL_VERSION = 2
export const SUBPROTOCOL = `skippr-sf.v${PROTOCOL_VERSION}`
/** Version 1: HELLO without a slot id; still spoken with older peers. */
export const SUBPROTOCOL_V1 = 'skippr-sf.v1'
/** The subprotocols this package speaks, preferred first. */
export const SUBPROTOCOLS: readonly string[] = [SUBPROTOCOL, SUBPROTOCOL_V1]

export const MessageType = {
  hello: 0x01,
  data: 0x02,
  welcome: 0x81,
  ack: 0x82,
  durableAck: 0x83,
  error: 0x84,
} as const

export type ErrorCategory = 'HALT' | 'DROP'
const CATEGORY_BYTE: Record<ErrorCategory, number> = { HALT: 1, DROP: 2 }

export const MAX_SENDER_ID_BYTES = 255
/** Bytes a DATA message spends before its first record, and per record. */
export const DATA_HEADER_BYTES = 1 + 8 + 4
export const RECORD_HEADER_BYTES = 4

export interface Frame {
  fsn: bigint
  payload: Uint8Array
}

export type ClientMessage =
  | { type: 'hello'; senderId: string; slotId: string | undefined; durableAck: boolean }
  | { type: 'data'; frames: Frame[] }

export type ServerMessage =
  | { type: 'welcome'; maxFrameBytes: number }
  | { type: 'ack'; fsn: bigint }
  | { type: 'durableAck'; fsn: bigint }
  | { type: 'error'; category: ErrorCategory; fsn: bigint; message: string }

/** A WebSocket close reason is at most 123 bytes of UTF-8 (RFC 6455); cut at a character boundary. */
export function closeReason(text: string): string {
  let reason = text
  while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1)
  return reason
}

const HELLO_DURABLE_ACK = 1
const HELLO_SLOT_ID = 2
const SLOT_ID_BYTES = 16

/** HELLO; `slotId` (a UUID) only on a version 2 connection, undefined on a version 1 one. */
export function encodeHello(senderId: string, durableAck: boolean, slotId?: string): Buffer {
  const id = Buffer.from(senderId, 'utf8')
  if (id.length === 0 || id.length > MAX_SENDER_ID_BYTES) {
    throw new WireFormatError(`sender id must be 1..${MAX_SENDER_ID_BYTES} bytes of UTF-8, got ${id.length}`)
  }
  if (slotId !== undefined && !isSlotId(slotId))
    throw new WireFormatError(`slot id "${slotId}" is not a UUID`)
  const out = Buffer.allocUnsafe(4 + id.length + (slotId === undefined ? 0 : SLOT_ID_BYTES))
  out[0] = MessageType.hello
  out[1] = (durableAck ? HELLO_DURABLE_ACK : 0) | (slotId === undefined ? 0 : HELLO_SLOT_ID)
  out.writeUInt16BE(id.length, 2)
  id.copy(out, 4)
  if (slotId !== undefined) out.write(slotId.replaceAll('-', ''), 4 + id.length, 'hex')
  return out
}

/** Size of the DATA message that would carry these payloads. */
export function dataMessageBytes(payloadBytes: number, count: number): number {
  return DATA_HEADER_BYTES + count * RECORD_HEADER_BYTES + payloadBytes
}

/** Encodes consecutive frames starting at `firstFsn` into one DATA message (one copy of each payload). */
export function encodeData(firstFsn: bigint, payloads: readonly Uint8Array[]): Buffer {
  let payloadBytes = 0
  for (const p of payloads) payloadBytes += p.length
  const out = Buffer.allocUnsafe(dataMessageBytes(payloadBytes, payloads.length))
  writeDataHeader(out, payloads.length)
  out.writeBigUInt64BE(firstFsn, 1)
  let at = DATA_HEADER_BYTES
  for (const p of payloads) {
    out.writeUInt32BE(p.length, at)
    out.set(p, at + RECORD_HEADER_BYTES)
    at += RECORD_HEADER_BYTES + p.length
  }
  return out
}

/** Bytes a DATA message of one record spends before its payload. */
const LONE_PAYLOAD_OFFSET = DATA_HEADER_BYTES + RECORD_HEADER_BYTES

/**
 * Copies `payload` into a DATA message of one record whose FSN is not known yet and returns the view of
 * the payload in it. The view can be stored meanwhile (the sender's slot appends it) and
 * `loneDataMessage` turns it back into the message: one copy serves the disk and the wire.
 */
export function encodeLoneRecord(payload: Uint8Array): Buffer {
  const message = Buffer.allocUnsafe(LONE_PAYLOAD_OFFSET + payload.length)
  writeDataHeader(message, 1)
  message.writeUInt32BE(payload.length, DATA_HEADER_BYTES)
  message.set(payload, LONE_PAYLOAD_OFFSET)
  return message.subarray(LONE_PAYLOAD_OFFSET)
}

/** The DATA message around a payload view from `encodeLoneRecord`, carrying it as frame `fsn`. */
export function loneDataMessage(payload: Uint8Array, fsn: bigint): Buffer {
  const start = payload.byteOffset - LONE_PAYLOAD_OFFSET
  const message = Buffer.from(payload.buffer, start, LONE_PAYLOAD_OFFSET + payload.length)
  message.writeBigUInt64BE(fsn, 1)
  return message
}

/** The type and frame count of a DATA message; its first FSN goes at offset 1. */
function writeDataHeader(out: Buffer, count: number): void {
  out[0] = MessageType.data
  out.writeUInt32BE(count, 9)
}

export function encodeWelcome(maxFrameBytes: number): Buffer {
  const out = Buffer.allocUnsafe(5)
  out[0] = MessageType.welcome
  out.writeUInt32BE(maxFrameBytes, 1)
  return out
}

export function encodeAck(fsn: bigint, durable = false): Buffer {
  const out = Buffer.allocUnsafe(9)
  out[0] = durable ? MessageType.durableAck : MessageType.ack
  out.writeBigUInt64BE(fsn, 1)
  return out
}

export function encodeError(category: ErrorCategory, fsn: bigint, message: string): Buffer {
  const text = Buffer.from(message, 'utf8')
  const out = Buffer.allocUnsafe(10 + text.length)
  out[0] = MessageType.error
  out[1] = CATEGORY_BYTE[category]
  out.writeBigUInt64BE(fsn, 2)
  text.copy(out, 10)
  return out
}

/** Decodes a message sent by a sender. Payloads are views into `buf`, not copies. */
export function decodeClientMessage(buf: Buffer): ClientMessage {
  const type = buf[0]
  if (type === MessageType.hello) {
    need(buf, 4, 'HELLO')
    const flags = buf[1]!
    const n = buf.readUInt16BE(2)
    const slotBytes = flags & HELLO_SLOT_ID ? SLOT_ID_BYTES : 0
    if (n === 0 || buf.length !== 4 + n + slotBytes)
      malformed(
        `HELLO sender id of ${n} bytes${slotBytes ? ' and a slot id' : ''} in a ${buf.length}-byte message`,
      )
    return {
      type: 'hello',
      durableAck: (flags & HELLO_DURABLE_ACK) !== 0,
      senderId: buf.toString('utf8', 4, 4 + n),
      slotId: slotBytes ? uuidText(buf.subarray(4 + n)) : undefined,
    }
  }
  if (type === MessageType.data) return { type: 'data', frames: decodeDataFrames(buf) }
  return malformed(`unknown sender message type ${describeType(type)}`)
}

function decodeDataFrames(buf: Buffer): Frame[] {
  need(buf, DATA_HEADER_BYTES, 'DATA')
  const first = buf.readBigUInt64BE(1)
  const count = buf.readUInt32BE(9)
  if (count === 0) malformed('DATA message with no frames')
  const frames: Frame[] = []
  let at = DATA_HEADER_BYTES
  for (let i = 0; i < count; i++) {
    if (at + RECORD_HEADER_BYTES > buf.length)
      malformed(`DATA message ends inside frame ${i + 1} of ${count}`)
    const n = buf.readUInt32BE(at)
    at += RECORD_HEADER_BYTES
    if (at + n > buf.length)
      malformed(`DATA frame ${i + 1} of ${count} claims ${n} bytes past the message end`)
    frames.push({ fsn: first + BigInt(i), payload: buf.subarray(at, at + n) })
    at += n
  }
  if (at !== buf.length) malformed(`DATA message has ${buf.length - at} trailing bytes after ${count} frames`)
  return frames
}

export function decodeServerMessage(buf: Buffer): ServerMessage {
  const type = buf[0]
  switch (type) {
    case MessageType.welcome:
      exact(buf, 5, 'WELCOME')
      return { type: 'welcome', maxFrameBytes: buf.readUInt32BE(1) }
    case MessageType.ack:
    case MessageType.durableAck:
      exact(buf, 9, type === MessageType.ack ? 'ACK' : 'DURABLE_ACK')
      return { type: type === MessageType.ack ? 'ack' : 'durableAck', fsn: buf.readBigUInt64BE(1) }
    case MessageType.error: {
      need(buf, 10, 'ERROR')
      const category = buf[1] === 1 ? 'HALT' : buf[1] === 2 ? 'DROP' : malformed(`ERROR category ${buf[1]}`)
      return { type: 'error', category, fsn: buf.readBigUInt64BE(2), message: buf.toString('utf8', 10) }
    }
    default:
      return malformed(`unknown receiver message type ${describeType(type)}`)
  }
}

function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

function describeType(type: number | undefined): string {
  return type === undefined ? '(empty message)' : `0x${type.toString(16).padStart(2, '0')}`
}

function need(buf: Buffer, bytes: number, what: string): void {
  if (buf.length < bytes) malformed(`${what} message of ${buf.length} bytes is shorter than ${bytes}`)
}

function exact(buf: Buffer, bytes: number, what: string): void {
  if (buf.length !== bytes) malformed(`${what} message of ${buf.length} bytes, expected ${bytes}`)
}

function malformed(detail: string): never {
  throw new WireFormatError(detail)
}
