/**
 * The source's state in its offset: the last FSN of each sender that the offset's commit holds
 * (`{ senderId → FSN }`, FSNs as decimal strings, since JSON numbers stop being exact at 2^53).
 * Committed with the rows, it is what the receiver's dedup resumes from after a restart.
 */
export type SenderFsns = Record<string, string>

/** The FSN of `senderId` in `fsns`; 0 for a sender it does not name (nothing of it committed). */
export function fsnOf(fsns: SenderFsns, senderId: string): bigint {
  const fsn = fsns[senderId]
  return fsn === undefined ? 0n : BigInt(fsn)
}

export function toSenderFsns(fsns: ReadonlyMap<string, bigint>): SenderFsns {
  const state: SenderFsns = {}
  for (const [senderId, fsn] of fsns) state[senderId] = fsn.toString()
  return state
}

export function fromSenderFsns(state: SenderFsns | undefined): Map<string, bigint> {
  return new Map(Object.entries(state ?? {}).map(([senderId, fsn]) => [senderId, BigInt(fsn)]))
}
