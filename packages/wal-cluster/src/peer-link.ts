/**
 * The leader's connection to one peer. Each session (a HELLO: on connect, after the leader's clear(),
 * after the peer asked for a resync) streams the leader's log from its oldest unlanded frame, in FSN
 * order, then every frame as it is appended; `durableFsn` is the highest FSN the peer confirmed in the
 * current session, so a peer counts for a commit only once it confirmed every frame up to it. A dropped
 * connection is retried (every RETRY_MS); a refusal for good (wrong bearer token, older fencing token)
 * is not, and is reported once.
 */
import type { Payload, SlotLogger } from '@skippr/sf/slot'
import type { WalMeta } from '@skippr/wal'
import WebSocket from 'ws'
import { bearerHeader, decodeMessage, encodeMessage, MAX_MESSAGE_BYTES, type Message } from './protocol.js'

/** What the link streams: the leader's log as it is at each call. */
export interface LinkSource {
  readonly pipeline: string
  readonly leaderId: string
  readonly token: bigint
  readonly bytesPerFile: number
  readonly logId: string
  readonly oldestFsn: bigint
  readonly publishedFsn: bigint
  /** The record the peer must hold too, numbered by the leader; undefined before the first writeMeta. */
  readonly meta: { readonly version: number; readonly meta: WalMeta } | undefined
  /** The frames from `fromFsn` to the last published, in order. */
  frames(fromFsn: bigint): AsyncIterable<{ readonly fsn: bigint; readonly payload: Payload }>
}

const RETRY_MS = 200
/** Bytes queued on the socket above which the stream waits for them to be written. */
const HIGH_WATER_BYTES = 8 * 1024 * 1024

export class PeerLink {
  /** The highest FSN the peer confirmed durable in the current session; 0 when it confirmed none. */
  durableFsn = 0n
  /** The meta version the peer confirmed durable in the current session. */
  metaVersion = 0
  /** Set once the peer answered in the current session: it took this leader's token and log. */
  confirmed = false
  /** Set when the peer refused this leader for good. */
  refused = false
  /** The link's state in words, for error messages. */
  problem = 'not connected yet'
  private ws: WebSocket | undefined
  private session = 0
  private next = 0n
  private pumping = false
  private retry: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    /** The peer's name in the in-sync set. */
    readonly nodeId: string,
    readonly url: string,
    private readonly secret: string,
    private readonly source: LinkSource,
    private readonly onChange: () => void,
    private readonly logger: SlotLogger | undefined,
  ) {
    this.connect()
  }

  /** New frames were published. */
  kick(): void {
    void this.pump()
  }

  /** The log was cleared (a new generation): start again with a new session. */
  restart(): void {
    if (this.isOpen()) this.startSession()
  }

  landed(fsn: bigint): void {
    this.send({ type: 'landed', session: this.session, fsn })
  }

  sendMeta(): void {
    const meta = this.source.meta
    if (meta !== undefined) this.send({ type: 'meta', session: this.session, ...meta })
  }

  close(): void {
    this.closed = true
    clearTimeout(this.retry)
    this.ws?.terminate()
  }

  private connect(): void {
    const ws = new WebSocket(this.url, { headers: bearerHeader(this.secret), maxPayload: MAX_MESSAGE_BYTES })
    this.ws = ws
    ws.on('open', () => this.startSession())
    ws.on('message', (data: Buffer) => this.receive(data))
    ws.on('error', (e) => {
      this.problem = `unreachable: ${e.message}`
    })
    ws.on('close', () => this.disconnected())
  }

  private disconnected(): void {
    this.durableFsn = 0n
    this.confirmed = false
    this.onChange()
    if (this.closed || this.refused) return
    if (!this.problem.startsWith('unreachable')) this.problem = 'disconnected'
    this.retry = setTimeout(() => this.connect(), RETRY_MS)
  }

  private startSession(): void {
    this.session++
    this.durableFsn = 0n
    this.metaVersion = 0
    this.confirmed = false
    this.next = this.source.oldestFsn
    this.problem = 'catching up'
    const s = this.source
    this.send({
      type: 'hello',
      pipeline: s.pipeline,
      leaderId: s.leaderId,
      token: s.token,
      logId: s.logId,
      session: this.session,
      oldestFsn: s.oldestFsn,
      publishedFsn: s.publishedFsn,
      bytesPerFile: s.bytesPerFile,
    })
    this.sendMeta()
    this.onChange()
    void this.pump()
  }

  private receive(data: Buffer): void {
    const message = decodeMessage(data)
    if (typeof message === 'string') {
      this.problem = message
      this.ws?.terminate()
      return
    }
    if (message.type === 'durable' && message.session === this.session) {
      if (message.fsn > this.durableFsn) this.durableFsn = message.fsn
      this.metaVersion = message.metaVersion
      this.confirmed = true
      this.problem = 'in sync'
      this.onChange()
    } else if (message.type === 'refused') {
      if (message.reason === 'resync') {
        if (message.session === this.session) this.startSession()
        return
      }
      this.refused = true
      this.problem = `refused: ${message.detail}`
      ;(this.logger ?? console).warn(
        `wal-cluster: peer ${this.url} refused pipeline ${this.source.pipeline}: ${message.detail}`,
      )
      this.ws?.close()
      this.onChange()
    }
  }

  /** Sends every published frame from `next` on; one pump at a time, restarted by a new session. */
  private async pump(): Promise<void> {
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.isOpen() && this.next <= this.source.publishedFsn) {
        const session = this.session
        for await (const { fsn, payload } of this.source.frames(this.next)) {
          if (session !== this.session || !this.isOpen()) break
          await this.sendFrame(session, fsn, payload)
          if (session === this.session) this.next = fsn + 1n
        }
      }
    } catch (e) {
      // The log changed under the read (a clear) or the socket went: a new session streams again.
      this.problem = `stream failed: ${e instanceof Error ? e.message : String(e)}`
      this.ws?.terminate()
    } finally {
      this.pumping = false
    }
  }

  private async sendFrame(session: number, fsn: bigint, payload: Payload): Promise<void> {
    const ws = this.ws!
    const data = encodeMessage({ type: 'append', session, fsn, payload })
    if (ws.bufferedAmount < HIGH_WATER_BYTES) ws.send(data)
    else await new Promise<void>((resolve) => ws.send(data, () => resolve()))
  }

  private send(message: Message): void {
    if (this.isOpen()) this.ws!.send(encodeMessage(message))
  }

  private isOpen(): boolean {
    return this.ws !== undefined && this.ws.readyState === WebSocket.OPEN
  }
}
