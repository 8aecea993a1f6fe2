/**
 * The `@skippr/sf` receiver as a source. Each batch of a sender's frames becomes one push (one
 * chunk); the receiver acks the frames once the WAL commit holding them happened (`committed`), and
 * a sender that asked for durable acks (`request_durable_ack=on`) gets one once the batch has landed
 * in the destination (`landed`).
 *
 * Exactly once: the offset of every chunk carries the slot and last pushed FSN of every sender, so
 * the committed offset is `{ senderId → { slot, last committed FSN } }`. After a restart the receiver
 * asks `delivered(senderId)` when a sender says HELLO and answers from it: the frames the sender
 * replays (all it holds unacked) at or below it are acked without being appended again, the rest are
 * appended as new. A commit whose ack was lost is therefore neither lost nor duplicated. A sender of
 * another slot under a known id (numbering its records from 1 again) is refused by the receiver.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import {
  type CommitWindow,
  ConfigError,
  type ConnectorContext,
  type NamespaceSchema,
  type ReadOptions,
  type Source,
  type SourceChunk,
  type SourceOffset,
} from '@skippr/connector-api'
import { PushQueue, parsePushOffset } from '@skippr/push-source'
import {
  createReceiver,
  type DeliveredPosition,
  type FramesOutcome,
  type ReceivedBatch,
  type Receiver,
} from '@skippr/sf'
import { listenAddress, type WebsocketConfig } from './config.js'
import { decodeFrames } from './frames.js'
import { publishReceiverMetrics } from './metrics.js'
import { fromSenderPositions, positionOf, type SenderPositions, toSenderPositions } from './offset.js'

/**
 * Bytes received and not yet committed, across all senders. Beyond it a batch waits for commits
 * before it is taken, and its sender's connection stops being read (the receiver's flow control):
 * a slow destination stalls senders instead of growing this process.
 */
const MAX_PENDING_BYTES = 32 * 1024 * 1024

export class WebsocketSource implements Source {
  readonly commitWindow: CommitWindow
  private readonly queue = new PushQueue<SenderPositions>({ maxPendingBytes: MAX_PENDING_BYTES })
  /** The slot and last FSN of each sender handed to the queue: what the next push's offset carries. */
  private pushed = new Map<string, DeliveredPosition>()
  /** The slot and last committed FSN of each sender: what the receiver's dedup starts from. */
  private committedPositions: SenderPositions = {}
  /** The last landed FSN of each sender, once known: what durable acks confirm. */
  private landedPositions: SenderPositions | undefined
  private receiver: Receiver | undefined
  private closed = false

  constructor(
    private readonly config: WebsocketConfig,
    private readonly context: ConnectorContext,
  ) {
    this.commitWindow = { maxDelayMs: config.commit_interval_ms }
    if (context.meter) publishReceiverMetrics(context.meter, () => this.receiver?.counters())
  }

  /** The namespace's fields come with the first records, so there is nothing to list before. */
  async discover(): Promise<NamespaceSchema[]> {
    return []
  }

  async *read(from: SourceOffset | undefined, options: ReadOptions): AsyncIterable<SourceChunk> {
    if (!options.follow)
      throw new ConfigError('the Websocket source receives for as long as sync runs: run sync without --once')
    const resumed = parsePushOffset<SenderPositions>(from)
    this.committedPositions = resumed?.state ?? {}
    this.pushed = fromSenderPositions(resumed?.state)
    // Started by the generator's first step, before the receiver can hand over any frame.
    const chunks = this.queue.chunks(resumed, options.signal)
    this.receiver = await this.listen()
    this.context.logger.info(`Websocket source: receiving on ${this.receiver.url}`)
    if (this.landedPositions) this.markDurable(this.landedPositions)
    yield* chunks
  }

  committed(offset: SourceOffset): void {
    // Before the pushes resolve: a sender's next HELLO finds what this commit holds.
    this.committedPositions = parsePushOffset<SenderPositions>(offset)!.state
    this.queue.committed(offset)
  }

  landed(offset: SourceOffset): void {
    this.landedPositions = parsePushOffset<SenderPositions>(offset)!.state
    if (this.receiver) this.markDurable(this.landedPositions)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.queue.close('stopping')
    await this.receiver?.close()
  }

  private async listen(): Promise<Receiver> {
    const { config } = this
    const { host, port } = listenAddress(config.listen)
    return createReceiver({
      host,
      port,
      path: '/',
      ...(config.tls_cert !== undefined &&
        config.tls_key !== undefined && {
          tls: { cert: await this.readPem(config.tls_cert), key: await this.readPem(config.tls_key) },
        }),
      ...(config.token !== undefined && { token: config.token }),
      maxFrameBytes: config.max_frame_bytes,
      ...(config.forget_senders_after_ms !== undefined && {
        forgetSendersAfterMs: config.forget_senders_after_ms,
      }),
      // Acks mean "committed"; durable acks wait for the landing (`landed`).
      durableAck: 'manual',
      // With the slot: a sender of another slot under a committed id is refused, not deduplicated.
      delivered: (senderId) => positionOf(this.committedPositions, senderId),
      onFrames: (batch) => this.onFrames(batch),
      onError: (error, senderId) =>
        this.context.logger.warn(`Websocket source: ${error.message}`, { sender_id: senderId }),
    })
  }

  /**
   * Pushes the batch's records and resolves once they are committed; the receiver then acks the
   * whole batch. A frame that does not decode is refused alone: its sender gets a DROP naming it,
   * and it is logged here. Never rejects after the push unless the run stops or fails before the
   * commit: the sender then sends the frames again, and dedup decides.
   */
  private async onFrames({ senderId, slotId, frames }: ReceivedBatch): Promise<FramesOutcome> {
    const { decoded, drop } = decodeFrames(frames, this.config.format)
    for (const { fsn, reason } of drop)
      this.context.logger.warn('Websocket source: a record was refused; its sender is told (DROP)', {
        sender_id: senderId,
        fsn: fsn.toString(),
        reason,
      })
    await this.queue.room(decoded.bytes)
    // A sender of protocol version 1 names no slot; the one recorded for the id stays.
    this.pushed.set(senderId, {
      fsn: frames[frames.length - 1]!.fsn,
      slotId: slotId ?? this.pushed.get(senderId)?.slotId,
    })
    await this.queue.push({
      namespace: this.config.namespace,
      decoded,
      state: toSenderPositions(this.pushed),
    })
    return { drop }
  }

  private markDurable(positions: SenderPositions): void {
    for (const senderId of Object.keys(positions))
      this.receiver!.markDurable(senderId, positionOf(positions, senderId).fsn)
  }

  private async readPem(file: string): Promise<Buffer> {
    try {
      return await readFile(path.resolve(this.context.configDir, file))
    } catch (error) {
      throw new ConfigError(`the Websocket source cannot read ${file}: ${(error as Error).message}`, {
        cause: error,
      })
    }
  }
}
