/**
 * What an application configures on a receiver and what it gets back, and the defaults the parts of the
 * receiver share. A receiver either listens on a port of its own or attaches to an HTTP(S) server the
 * application already runs; everything else is the same in both modes.
 */
import type { Server as HttpServer } from 'node:http'
import type { Server as HttpsServer } from 'node:https'
import { defaultLogger } from './logger.js'
import { newReceiverCounters, type ReceiverCounters } from './receiver-counters.js'
import type { Frame } from './wire.js'

export interface ReceivedBatch {
  senderId: string
  /**
   * The sender's slot (a UUID, from HELLO): FSNs count within it. Persist it with the last FSN and
   * answer it from `delivered()`. Undefined from a sender of protocol version 1.
   */
  slotId: string | undefined
  /** Consecutive, never-before-delivered frames of one sender, in FSN order. */
  frames: Frame[]
}

/** What `onFrames` may return: frames it refuses (reported to the sender as DROP errors, then acked). */
export interface FramesOutcome {
  drop?: Array<{ fsn: bigint; reason: string }>
}

/**
 * What the application holds of a sender id: the last FSN it has and the slot that FSN counts in
 * (undefined when it did not record one, e.g. an entry written before slot ids existed).
 */
export interface DeliveredPosition {
  fsn: bigint
  slotId?: string | undefined
}

/** Options of both modes. */
export interface ReceiverBaseOptions {
  /**
   * Handles a batch. The frames are acknowledged once the promise resolves, so an application that
   * commits them itself (a database transaction, a WAL) resolves it after that commit. While it is
   * pending, no other batch of the same sender is handed over. Throw a `HaltSenderError` (code
   * `SF_HALT_REQUESTED`) to halt the sender; any other error closes the connection so the sender retries
   * the same frames later, and they are handed over again: reject only frames that will not be committed.
   */
  onFrames(batch: ReceivedBatch): Promise<FramesOutcome | undefined> | FramesOutcome | undefined
  /** Require `Authorization: Bearer <token>` on the upgrade request. */
  token?: string
  /**
   * Take only upgrade requests for this path (the part of the URL before `?`), e.g. `/`; a `Sender`
   * connects to `/`. Default: every upgrade request that reaches the receiver.
   */
  path?: string
  /** Largest DATA message accepted, in bytes (default 16 MiB); larger ones close the connection. */
  maxFrameBytes?: number
  /**
   * The highest FSN the application already holds for a sender, consulted when that sender connects, so
   * dedup survives a receiver restart when the application persists what it received: replayed frames at
   * or below it are acknowledged without being handed to `onFrames` again. Answer with the slot id it was
   * received from as well (`{ fsn, slotId }`), and a sender of another slot under that id is refused
   * instead of having its frames taken as already delivered. A plain FSN (or no `slotId`) names no slot:
   * the first slot to connect under the id is taken as the one it counts. `slotId` is the connecting
   * sender's (undefined from protocol version 1).
   */
  delivered?(
    senderId: string,
    slotId: string | undefined,
  ): bigint | DeliveredPosition | Promise<bigint | DeliveredPosition>
  /**
   * `with-ack` (default): a frame is durable once `onFrames` resolved. `manual`: the application calls
   * `receiver.markDurable()` later (e.g. after an upload).
   */
  durableAck?: 'with-ack' | 'manual'
  /** Connection-level problems (protocol violations, failing `onFrames`). Default: console.warn. */
  onError?(error: Error, senderId: string | undefined): void
  /**
   * Forget a sender's dedup state once it has had no connection for this long (default: never). The
   * receiver keeps a few hundred bytes per sender id it has seen; with many short-lived sender ids, this
   * bounds that memory. A sender that comes back later starts from `delivered()` (or 0 without it), so
   * frames it replays that were delivered but whose ack it never got are delivered again: implement
   * `delivered()` to keep dedup exact across forgetting.
   */
  forgetSendersAfterMs?: number
}

/** The receiver opens a server of its own. */
export interface ReceiverListenOptions {
  /** TCP port; 0 picks a free one (read it back from `receiver.port`). */
  port: number
  host?: string
  /** Serve `wss`. */
  tls?: { key: string | Buffer; cert: string | Buffer }
}

/**
 * The receiver handles the `upgrade` requests of a server the application runs (and listens with), next
 * to its own request handlers; `wss` when that server is an `https.Server`.
 */
export interface ReceiverAttachOptions {
  server: HttpServer | HttpsServer
  port?: never
  host?: never
  tls?: never
}

export type ReceiverOptions = ReceiverBaseOptions & (ReceiverListenOptions | ReceiverAttachOptions)

export interface Receiver {
  /** The port of the receiver's server; attached, that of the shared server (0 while it is not listening). */
  readonly port: number
  /** `ws://host:port` or `wss://host:port`, followed by `path` when one is set. */
  readonly url: string
  /** Confirms that every frame of `senderId` up to `fsn` is durable (with `durableAck: 'manual'`). */
  markDurable(senderId: string, fsn: bigint): void
  /** A snapshot of the counters (sessions, frames, replays, error frames sent). */
  counters(): ReceiverCounters
  /**
   * Closes the receiver's connections. A server of its own is closed too; an attached server is left
   * running, without the receiver's `upgrade` handler.
   */
  close(): Promise<void>
}

/** The options with their defaults applied, as the connections and the delivery use them. */
export interface ReceiverSettings {
  maxFrameBytes: number
  durableMode: 'with-ack' | 'manual'
  onFrames: ReceiverBaseOptions['onFrames']
  /** `delivered()` as a position; undefined without the option. */
  delivered: ((senderId: string, slotId: string | undefined) => Promise<DeliveredPosition>) | undefined
  report(error: Error, senderId: string | undefined): void
  /** Counted by the connections and the delivery. */
  counters: ReceiverCounters
}

const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024

export function resolveSettings(options: ReceiverBaseOptions): ReceiverSettings {
  const { delivered } = options
  return {
    maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    durableMode: options.durableAck ?? 'with-ack',
    // Called on `options`, as methods, so an application's `this` keeps working.
    onFrames: (batch) => options.onFrames(batch),
    delivered:
      delivered &&
      (async (senderId, slotId) => {
        const held = await delivered.call(options, senderId, slotId)
        return typeof held === 'bigint' ? { fsn: held } : held
      }),
    report: options.onError ?? ((e, id) => defaultLogger.warn(`receiver: ${e.message}`, { senderId: id })),
    counters: newReceiverCounters(),
  }
}
