/**
 * The messages between a leader and a peer, one per `ws` binary message:
 *
 *   [u32 BE CRC32C of the rest][u8 type][u32 BE header length][header: UTF-8 JSON][payload: APPEND only]
 *
 * A message whose CRC does not match is dropped with its connection (the leader reconnects and streams
 * again), so a damaged byte can never become a stored frame. FSNs and fencing tokens are decimal strings
 * in the JSON (they are 64-bit). The bearer token travels once, in the upgrade request's
 * `Authorization: Bearer …` header, never in a message.
 *
 * Every message after HELLO names the leader's `session`: HELLO starts a new one (on connect, after the
 * leader's clear(), after a resync), and either side ignores a message of an older session still in
 * flight, so nothing from before a clear or a resync is mistaken for the log of now.
 */
import { crc32c } from '@node-rs/crc32'
import type { WalMeta } from '@skippr/wal'

/** The leader opens a session for one pipeline's log: who it is, its lease, and what its log holds. */
export interface Hello {
  readonly type: 'hello'
  readonly pipeline: string
  readonly leaderId: string
  /** The writer lease's fencing token: a peer refuses a leader whose token is older than one it saw. */
  readonly token: bigint
  /** The log's generation, minted when the log is made and at every clear(): FSNs mean frames within it. */
  readonly logId: string
  readonly session: number
  /** The leader's oldest unlanded FSN (its ack watermark + 1): everything before it may go. */
  readonly oldestFsn: bigint
  readonly publishedFsn: bigint
  /** The leader's WAL file size, so the peer's copy takes every frame the leader's does. */
  readonly bytesPerFile: number
}

/** One frame of the log, at the FSN it has on the leader. */
export interface Append {
  readonly type: 'append'
  readonly session: number
  readonly fsn: bigint
  readonly payload: Uint8Array
}

/** The peer's answer: every FSN up to `fsn` of this session is durable in its copy, and meta `metaVersion`. */
export interface Durable {
  readonly type: 'durable'
  readonly session: number
  readonly fsn: bigint
  readonly metaVersion: number
}

/** The leader's ack watermark: the peer's copy may trim up to it. */
export interface Landed {
  readonly type: 'landed'
  readonly session: number
  readonly fsn: bigint
}

/** The leader's metadata record, numbered within the session so DURABLE can confirm it. */
export interface Meta {
  readonly type: 'meta'
  readonly session: number
  readonly version: number
  readonly meta: WalMeta
}

export type RefusalReason = 'bad-bearer' | 'older-token' | 'resync'

/**
 * The peer will not take the session: `bad-bearer` and `older-token` are final for this leader (it is
 * misconfigured or fenced); `resync` means the peer dropped its divergent copy and wants the session
 * started again from the leader's oldest unlanded frame.
 */
export interface Refused {
  readonly type: 'refused'
  readonly session: number
  readonly reason: RefusalReason
  readonly detail: string
}

export type Message = Hello | Append | Durable | Landed | Meta | Refused

const TYPES = ['hello', 'append', 'durable', 'landed', 'meta', 'refused'] as const
const BIGINT_FIELDS = new Set(['token', 'oldestFsn', 'publishedFsn', 'fsn'])
const PREFIX_BYTES = 4 + 1 + 4

/** A message as one buffer; an APPEND's payload may be pieces, stored back to back. */
export function encodeMessage(message: Message | AppendPieces): Buffer {
  const { payload, ...header } = message as Message & { payload?: Uint8Array | readonly Uint8Array[] }
  const json = Buffer.from(
    JSON.stringify(header, (_, v) => (typeof v === 'bigint' ? v.toString() : v)),
    'utf8',
  )
  const pieces = payload === undefined ? [] : payload instanceof Uint8Array ? [payload] : payload
  const out = Buffer.concat([Buffer.alloc(PREFIX_BYTES), json, ...pieces])
  out.writeUInt8(TYPES.indexOf(message.type), 4)
  out.writeUInt32BE(json.length, 5)
  out.writeUInt32BE(crc32c(out.subarray(4)), 0)
  return out
}

/** APPEND as the leader sends it: the payload as the WAL handed it over, without joining its pieces. */
export interface AppendPieces extends Omit<Append, 'payload'> {
  readonly payload: Uint8Array | readonly Uint8Array[]
}

/** The message in `data`, or a one-line reason it is not one (bad CRC, unknown type, short). */
export function decodeMessage(data: Uint8Array): Message | string {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  if (buf.length < PREFIX_BYTES) return `message of ${buf.length} bytes is too short`
  if (buf.readUInt32BE(0) !== crc32c(buf.subarray(4))) return 'message CRC32C mismatch'
  const type = TYPES[buf.readUInt8(4)]
  const headerEnd = PREFIX_BYTES + buf.readUInt32BE(5)
  if (type === undefined || headerEnd > buf.length) return 'malformed message'
  try {
    const header = JSON.parse(buf.subarray(PREFIX_BYTES, headerEnd).toString('utf8'), (k, v) =>
      BIGINT_FIELDS.has(k) && typeof v === 'string' ? BigInt(v) : v,
    ) as Record<string, unknown>
    if (header.type !== type) return 'malformed message'
    // The fields are not checked one by one: the CRC says the bytes are what an authenticated leader
    // or peer of this version sent. The payload is a view of the received buffer, which ws never reuses.
    return (type === 'append'
      ? { ...header, payload: buf.subarray(headerEnd) }
      : header) as unknown as Message
  } catch {
    return 'malformed message header'
  }
}

/** The CRC32C a peer keeps per frame to tell a frame it holds from a divergent one at the same FSN. */
export function payloadCrc(payload: Uint8Array): number {
  return crc32c(payload)
}

/** The upgrade header carrying the shared secret. */
export function bearerHeader(secret: string): Record<string, string> {
  return { authorization: `Bearer ${secret}` }
}

/** Largest ws message either side takes: a frame of a 1 GiB WAL file plus its header. */
export const MAX_MESSAGE_BYTES = 1024 * 1024 * 1024 + 64 * 1024
