/**
 * One sender's WebSocket on the receiver: the protocol as a connection sees it. HELLO names the sender
 * and claims its session; WELCOME follows once the application said what it already holds; DATA is
 * checked for FSN order, queued, and drained batch by batch through the session's queue.
 *
 * A HELLO whose slot id conflicts with the one the sender id belongs to (sender-sessions.ts) is answered
 * with ERROR HALT instead of WELCOME, and the connection closes: it never takes the id over.
 *
 * Invariants: nothing is handled before HELLO, and HELLO comes once (within `HELLO_TIMEOUT_MS`). No ack
 * goes out before WELCOME (DATA is only handled after it, and durable acks wait for it). Within the
 * connection, each DATA message starts at or above the end of the previous one. Once `closed` is set, the
 * connection sends nothing more and ignores what still arrives; every way of ending it (peer, protocol
 * violation, application failure, halt, superseding, shutdown) sets it first.
 */
import { WebSocket } from 'ws'
import { deliverBatch } from './delivery.js'
import { ProtocolViolationError, SenderIdTakenError, WireFormatError } from './errors.js'
import { InboundQueue } from './flow-control.js'
import type { ReceiverSettings } from './receiver-options.js'
import type { SenderSession, SenderSessions, SessionConnection } from './sender-sessions.js'
import {
  closeReason,
  decodeClientMessage,
  encodeAck,
  encodeError,
  encodeWelcome,
  type Frame,
} from './wire.js'

const HELLO_TIMEOUT_MS = 10_000

const CLOSE_PROTOCOL_ERROR = 1002
const CLOSE_APPLICATION_ERROR = 1011
const CLOSE_SUPERSEDED = 4000
const CLOSE_HALTED = 4001

export class ReceiverConnection implements SessionConnection {
  closed = false
  wantsDurableAcks = false
  slotId: string | undefined
  accepted = false
  private id: string | undefined
  private session: SenderSession | undefined
  /** Lowest FSN the next DATA message may start with; undefined until the first one. */
  private nextFsn: bigint | undefined
  private readonly queue: InboundQueue
  private draining = false
  /** WELCOME was sent: the sender accepts acks from now on. */
  private welcomed = false
  private readonly helloTimer: NodeJS.Timeout

  constructor(
    readonly ws: WebSocket,
    private readonly settings: ReceiverSettings,
    private readonly sessions: SenderSessions,
    onClosed: (conn: ReceiverConnection) => void,
  ) {
    this.queue = new InboundQueue(ws)
    this.helloTimer = setTimeout(
      () => this.violation(`no HELLO within ${HELLO_TIMEOUT_MS} ms`),
      HELLO_TIMEOUT_MS,
    )
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary))
    ws.on('error', (e) => this.onSocketError(e))
    ws.on('close', () => {
      clearTimeout(this.helloTimer)
      this.closed = true
      onClosed(this)
      if (this.welcomed) this.settings.counters.sendersConnected--
      if (this.id !== undefined) this.sessions.release(this.id, this)
    })
  }

  /** The sender id from HELLO (read only after HELLO, by the delivery). */
  get senderId(): string {
    return this.id!
  }

  supersede(): void {
    this.close(CLOSE_SUPERSEDED, 'superseded by a newer connection of the same sender')
  }

  sendDurableAck(fsn: bigint): void {
    // Before WELCOME a sender takes any ack as a protocol violation. Nothing is lost: the session keeps
    // the durable FSN, and the sender replays everything not durably acked, whose acks carry it.
    if (this.welcomed) this.send(encodeAck(fsn, true))
  }

  send(message: Buffer): void {
    if (!this.closed && this.ws.readyState === WebSocket.OPEN) this.ws.send(message)
  }

  halt(fsn: bigint, message: string, closeWith = 'sender halted by the application'): void {
    this.send(encodeError('HALT', fsn, message))
    this.settings.counters.errorsSent.HALT++
    this.queue.clear()
    this.close(CLOSE_HALTED, closeWith)
  }

  close(code: number, reason: string): void {
    if (this.closed) return
    this.closed = true
    this.ws.close(code, closeReason(reason))
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.closed) return
    if (!isBinary) {
      this.violation('text message received; the protocol uses binary messages')
      return
    }
    try {
      const msg = decodeClientMessage(data)
      if (msg.type === 'hello') {
        clearTimeout(this.helloTimer)
        this.onHello(msg.senderId, msg.slotId, msg.durableAck)
      } else {
        this.onData(msg.frames)
      }
    } catch (e) {
      this.violation(
        e instanceof WireFormatError || e instanceof ProtocolViolationError ? e.message : String(e),
      )
    }
  }

  private onSocketError(e: Error): void {
    // ws closes the socket itself (1009 for an oversized message); report it in protocol terms.
    const detail =
      (e as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
        ? `message larger than maxFrameBytes (${this.settings.maxFrameBytes})`
        : e.message
    this.settings.report(new ProtocolViolationError(detail, { cause: e }), this.id)
  }

  private onHello(senderId: string, slotId: string | undefined, durableAck: boolean): void {
    if (this.id !== undefined) throw new ProtocolViolationError('second HELLO on one connection')
    this.id = senderId
    this.slotId = slotId
    this.wantsDurableAcks = durableAck
    const taken = this.sessions.find(senderId)?.refusal(slotId)
    if (taken !== undefined) {
      this.refuse(taken)
      return
    }
    const session = this.sessions.claim(senderId, this)
    this.session = session
    // WELCOME only after the application told us what it holds, so no DATA can race the dedup seed.
    session.enqueue(
      async () => {
        const { delivered, durableMode, maxFrameBytes } = this.settings
        const held = delivered && (await delivered(senderId, slotId))
        if (this.closed) return
        if (held) session.adopt(held.slotId)
        const refused = session.refusal(slotId)
        if (refused !== undefined) {
          this.refuse(refused)
          return
        }
        if (held) session.seed(held.fsn, durableMode)
        session.adopt(slotId)
        this.accepted = true
        this.ws.send(encodeWelcome(maxFrameBytes))
        this.welcomed = true
        this.settings.counters.sessionsOpened++
        this.settings.counters.sendersConnected++
      },
      (e) => this.fail(e),
    )
  }

  /** The sender id is another slot's: one clear error on both sides, and the id stays with that slot. */
  private refuse(detail: string): void {
    const error = new SenderIdTakenError(this.senderId, detail)
    this.settings.report(error, this.id)
    this.halt(0n, error.message, 'sender id in use by another slot')
  }

  private onData(frames: Frame[]): void {
    if (this.session === undefined) throw new ProtocolViolationError('DATA before HELLO')
    const first = frames[0]!.fsn
    if (first === 0n) throw new ProtocolViolationError('DATA with FSN 0; FSNs start at 1')
    // Within a connection FSNs only go up; a gap is a range the sender's slot lost and reported.
    if (this.nextFsn !== undefined && first < this.nextFsn) {
      throw new ProtocolViolationError(
        `DATA starts at FSN ${first}, below the next expected FSN ${this.nextFsn}`,
      )
    }
    this.nextFsn = first + BigInt(frames.length)
    this.queue.push(frames)
    if (!this.draining) this.drain(this.session)
  }

  /** Hands the queue to the application batch by batch, in the sender's turn. */
  private drain(session: SenderSession): void {
    this.draining = true
    session.enqueue(
      async () => {
        try {
          while (!this.queue.isEmpty && !this.closed) {
            await deliverBatch(this.settings, session, this, this.queue.takeBatch())
          }
        } finally {
          this.draining = false
        }
      },
      (e) => this.fail(e),
    )
  }

  private violation(detail: string): void {
    this.settings.report(new ProtocolViolationError(detail), this.id)
    this.close(CLOSE_PROTOCOL_ERROR, detail)
  }

  /** The application (or `delivered()`) failed: close, so the sender retries the frames later. */
  private fail(e: unknown): void {
    this.settings.report(e instanceof Error ? e : new Error(String(e)), this.id)
    this.close(CLOSE_APPLICATION_ERROR, 'receiver application failed; the sender will retry')
  }
}
