/**
 * Delivery of one batch of a sender's frames to the application, and its acknowledgement: frames already
 * delivered are skipped (dedup), the fresh ones go to `onFrames`, and the sender hears ACK (and
 * DURABLE_ACK when it asked for them) only after `onFrames` has resolved — the ack is the application's
 * word that the frames are safe, so the sender may trim them.
 *
 * Invariants: an ACK covers the whole batch, replayed frames included, and is sent after the DROP errors
 * of that batch; a DURABLE_ACK never exceeds the ACK it accompanies; a halted batch is not acked. Runs
 * inside the sender's session queue, so batches of one sender never overlap.
 */
import type { ReceiverSettings } from './receiver-options.js'
import type { SenderSession } from './sender-sessions.js'
import { encodeAck, encodeError, type Frame } from './wire.js'

/** Where a batch's answers go: the connection it arrived on. */
export interface AckChannel {
  readonly senderId: string
  readonly slotId: string | undefined
  readonly wantsDurableAcks: boolean
  send(message: Buffer): void
  /** Refuses the sender any further frames: HALT for `fsn`, then the connection closes. */
  halt(fsn: bigint, message: string): void
}

export async function deliverBatch(
  settings: ReceiverSettings,
  session: SenderSession,
  channel: AckChannel,
  batch: readonly Frame[],
): Promise<void> {
  const last = batch[batch.length - 1]!.fsn
  const fresh = session.fresh(batch)
  const { counters } = settings
  counters.framesReceived += batch.length
  counters.framesReplayed += batch.length - fresh.length
  if (fresh.length > 0) {
    const drops = await handOver(settings, channel, fresh)
    if (drops === 'halted') return
    session.handled(last, settings.durableMode)
    for (const d of drops) channel.send(encodeError('DROP', d.fsn, d.reason))
    counters.errorsSent.DROP += drops.length
  }
  acknowledge(session, channel, last)
}

/** Calls `onFrames`; the frames it refuses, or `halted` when it halted the sender. */
async function handOver(
  settings: ReceiverSettings,
  channel: AckChannel,
  frames: Frame[],
): Promise<Array<{ fsn: bigint; reason: string }> | 'halted'> {
  try {
    const outcome = await settings.onFrames({ senderId: channel.senderId, slotId: channel.slotId, frames })
    return outcome?.drop ?? []
  } catch (e) {
    // Matched by code, not class, so a HaltSenderError from another copy of this package works too.
    if ((e as { code?: unknown }).code !== 'SF_HALT_REQUESTED') throw e
    channel.halt(frames[0]!.fsn, (e as Error).message)
    return 'halted'
  }
}

function acknowledge(session: SenderSession, channel: AckChannel, last: bigint): void {
  channel.send(encodeAck(last))
  if (!channel.wantsDurableAcks) return
  const durable = session.durableUpTo(last)
  if (durable > 0n) channel.send(encodeAck(durable, true))
}
