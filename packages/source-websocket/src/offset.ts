/**
 * The source's state in its offset: per sender id, the slot whose records the offset's commit holds
 * and the last FSN of them (`{ senderId → { slot, fsn } }`, FSNs as decimal strings, since JSON
 * numbers stop being exact at 2^53). Committed with the rows, it is what the receiver's dedup resumes
 * from after a restart, and what tells a slot that owns a sender id from another one reusing it.
 *
 * Offsets of earlier versions hold the FSN alone (`{ senderId → fsn }`); such an entry names no slot,
 * and the receiver takes the first slot to connect under the id as the one it counts.
 */
import type { DeliveredPosition } from '@skippr/sf'

/** A sender's slot id and last FSN; the slot is missing when its sender named none (protocol version 1). */
export type SenderEntry = { slot: string; fsn: string } | { fsn: string }

export type SenderPositions = Record<string, SenderEntry | string>

/** Where `senderId` stands in `state`; FSN 0 and no slot for a sender it does not name. */
export function positionOf(state: SenderPositions, senderId: string): DeliveredPosition {
  const entry = state[senderId]
  if (entry === undefined) return { fsn: 0n }
  if (typeof entry === 'string') return { fsn: BigInt(entry) }
  return { fsn: BigInt(entry.fsn), slotId: 'slot' in entry ? entry.slot : undefined }
}

export function toSenderPositions(positions: ReadonlyMap<string, DeliveredPosition>): SenderPositions {
  const state: SenderPositions = {}
  for (const [senderId, { fsn, slotId }] of positions)
    state[senderId] = slotId === undefined ? { fsn: fsn.toString() } : { slot: slotId, fsn: fsn.toString() }
  return state
}

export function fromSenderPositions(state: SenderPositions | undefined): Map<string, DeliveredPosition> {
  return new Map(Object.keys(state ?? {}).map((senderId) => [senderId, positionOf(state!, senderId)]))
}
