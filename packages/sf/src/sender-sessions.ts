/**
 * What the receiver remembers per sender id across that sender's connections: which slot's frames it
 * counts, how far they were delivered (the dedup point) and confirmed durable, which connection is its
 * current one, and the queue of work that serialises handling across connections.
 *
 * Invariants: `delivered` and `durable` only rise. All work of one sender (consulting `delivered()`,
 * handing batches to the application) runs one piece at a time through `enqueue`, even while an old
 * connection is still inside `onFrames` when a new one says HELLO, so no frame is handed over twice. A
 * sender has at most one current connection; claiming the id for a new one supersedes the old. A session
 * is forgotten only after `forgetSendersAfterMs` without a connection and once its work has settled.
 *
 * Slot identity: FSNs count within one slot (`slotId`, from HELLO), and two slots under one sender id
 * both start at 1, so the dedup point of one says nothing about the other's frames. Once a session
 * counts a slot (the first one accepted, or the one the application's `delivered()` names), that never
 * changes, and a connection of any other slot is refused (`refusal`) rather than acked as "already
 * delivered". A sender without a slot id (protocol version 1) is deduplicated by sender id alone, as
 * before.
 */
import type { Frame } from './wire.js'

/** What a session needs of a connection. */
export interface SessionConnection {
  readonly closed: boolean
  /** The slot the connection's HELLO named; undefined from a version 1 sender. */
  readonly slotId: string | undefined
  /** The connection passed the slot check and got WELCOME. */
  readonly accepted: boolean
  readonly wantsDurableAcks: boolean
  /** Closes the connection because a newer one of the same sender took over. */
  supersede(): void
  sendDurableAck(fsn: bigint): void
}

export class SenderSession {
  /** The slot whose frames `delivered` counts; undefined until one is known. */
  slotId: string | undefined
  delivered = 0n
  durable = 0n
  current: SessionConnection | undefined
  /** Runs `forgetSendersAfterMs` after the sender's last connection closed. */
  forgetTimer: NodeJS.Timeout | undefined
  private turn: Promise<void> = Promise.resolve()

  /** Runs `work` after every earlier piece of this sender's work; its failure goes to `onError`. */
  enqueue(work: () => Promise<void>, onError: (e: unknown) => void): void {
    this.turn = this.turn.then(work).catch(onError)
  }

  /** Resolves once the work enqueued so far has settled. */
  settled(): Promise<void> {
    return this.turn
  }

  /**
   * Why a connection of `slotId` may not use this sender id, or undefined when it may: another slot's
   * connection holds it now, or the session counts another slot's frames.
   */
  refusal(slotId: string | undefined): string | undefined {
    if (slotId === undefined) return undefined
    const holder = this.current
    if (holder?.accepted && !holder.closed && holder.slotId !== undefined && holder.slotId !== slotId)
      return `is in use by another slot (${holder.slotId}), connected now; this is slot ${slotId}`
    if (this.slotId !== undefined && this.slotId !== slotId)
      return `belongs to another slot (${this.slotId}), whose FSNs the receiver counts; this is slot ${slotId}, numbered from 1 again`
    return undefined
  }

  /** From now on the session counts `slotId`'s frames, unless it counts a slot already. */
  adopt(slotId: string | undefined): void {
    this.slotId ??= slotId
  }

  /** Takes what the application already holds as the dedup point (on connect, from `delivered()`). */
  seed(held: bigint, durableMode: 'with-ack' | 'manual'): void {
    if (held > this.delivered) this.delivered = held
    // Held and acknowledged counts as durable only when acks mean durability.
    if (durableMode === 'with-ack' && held > this.durable) this.durable = held
  }

  /** The frames of `batch` not delivered yet (a replay after a reconnect repeats some). */
  fresh(batch: readonly Frame[]): Frame[] {
    return batch.filter((f) => f.fsn > this.delivered)
  }

  /** The application handled frames up to `last`. */
  handled(last: bigint, durableMode: 'with-ack' | 'manual'): void {
    this.delivered = last
    if (durableMode === 'with-ack') this.durable = last
  }

  /** The durable FSN to report along with an ack of `last` (never above what this ack covers). */
  durableUpTo(last: bigint): bigint {
    return minFsn(this.durable, last)
  }

  /** The application confirmed frames up to `fsn` durable; the current connection hears of it. */
  markDurable(fsn: bigint): void {
    if (fsn <= this.durable) return
    this.durable = fsn
    if (this.current?.wantsDurableAcks) this.current.sendDurableAck(minFsn(fsn, this.delivered))
  }
}

export class SenderSessions {
  private readonly byId = new Map<string, SenderSession>()

  constructor(private readonly forgetAfterMs: number | undefined) {}

  /** The sender's session if it has one (a refused newcomer does not make one). */
  find(senderId: string): SenderSession | undefined {
    return this.byId.get(senderId)
  }

  /** The sender's session, created on first use. */
  get(senderId: string): SenderSession {
    let session = this.byId.get(senderId)
    if (!session) {
      session = new SenderSession()
      this.byId.set(senderId, session)
    }
    return session
  }

  /** Makes `conn` the sender's current connection, superseding the previous one. */
  claim(senderId: string, conn: SessionConnection): SenderSession {
    const session = this.get(senderId)
    clearTimeout(session.forgetTimer)
    const previous = session.current
    session.current = conn
    if (previous && !previous.closed) previous.supersede()
    return session
  }

  /** `conn` closed; if it was the sender's current connection, the sender is now idle. */
  release(senderId: string, conn: SessionConnection): void {
    const session = this.byId.get(senderId)
    if (session?.current !== conn) return
    session.current = undefined
    this.forgetLater(senderId, session)
  }

  /** Stops the forget timers (the receiver is closing). */
  stopTimers(): void {
    for (const session of this.byId.values()) clearTimeout(session.forgetTimer)
  }

  /** Drops an idle sender's state once its handling has settled and it is still without a connection. */
  private forgetLater(senderId: string, session: SenderSession): void {
    const after = this.forgetAfterMs
    if (after === undefined) return
    clearTimeout(session.forgetTimer)
    session.forgetTimer = setTimeout(() => {
      void session.settled().then(() => {
        if (session.current === undefined && this.byId.get(senderId) === session) this.byId.delete(senderId)
      })
    }, after)
    session.forgetTimer.unref()
  }
}

function minFsn(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}
