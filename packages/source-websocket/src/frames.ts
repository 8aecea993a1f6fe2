/**
 * One batch of a sender's frames as the rows of one chunk. Each frame is one record as the
 * application sent it (`Sender.send`), decoded on its own in the configured format, so a frame that
 * does not decode is refused alone (a DROP to its sender, with the reason) and the others go on.
 */
import { evolveSchema, type Field } from '@skippr/connector-api'
import { type DecodedPayload, decodePayload, type PushFormat } from '@skippr/push-source'
import type { Frame } from '@skippr/sf'

export interface DecodedFrames {
  /** The rows of every frame that decoded, in FSN order. */
  readonly decoded: DecodedPayload
  /** The frames that did not, and why. */
  readonly drop: { fsn: bigint; reason: string }[]
}

export function decodeFrames(frames: readonly Frame[], format: PushFormat): DecodedFrames {
  const parts: DecodedPayload[] = []
  const drop: { fsn: bigint; reason: string }[] = []
  for (const frame of frames) {
    try {
      parts.push(decodePayload(frame.payload, format))
    } catch (error) {
      drop.push({ fsn: frame.fsn, reason: `not ${format}: ${(error as Error).message}` })
    }
  }
  return { decoded: parts.length === 1 ? parts[0]! : joined(parts), drop }
}

/** Payloads back to back (each a JSON-lines body): their fields merged as a schema evolves. */
function joined(parts: readonly DecodedPayload[]): DecodedPayload {
  let fields: readonly Field[] = []
  for (const part of parts)
    fields = evolveSchema({ namespace: '', fields }, { namespace: '', fields: part.fields }).fields
  const body = new Uint8Array(parts.reduce((sum, part) => sum + part.body.length, 0))
  let at = 0
  for (const part of parts) {
    body.set(part.body, at)
    at += part.body.length
  }
  return {
    format: 'jsonl',
    rows: parts.reduce((sum, part) => sum + part.rows, 0),
    bytes: parts.reduce((sum, part) => sum + part.bytes, 0),
    fields,
    body,
  }
}
