/**
 * One WebSocket connection from a sender to a receiver: the upgrade (subprotocol, bearer token, TLS),
 * HELLO/WELCOME, decoding of receiver messages, write flow control and a keepalive that declares a silent
 * connection dead. A Link never reconnects; the forwarder makes a new one.
 */
import { WebSocket } from 'ws'
import {
  ConnectionLostError,
  ProtocolVersionError,
  ProtocolViolationError,
  SenderAuthError,
} from './errors.js'
import {
  closeReason,
  decodeServerMessage,
  type ErrorCategory,
  encodeHello,
  SUBPROTOCOL,
  SUBPROTOCOLS,
} from './wire.js'

export interface Endpoint {
  /** `ws://host:port/` or `wss://host:port/`. */
  url: string
  /** `host:port`, for messages. */
  addr: string
  token: string | undefined
  /** Extra CA certificates (PEM) to trust for `wss`. */
  ca: Buffer | undefined
  rejectUnauthorized: boolean
}

export interface LinkHandlers {
  onAck(fsn: bigint, durable: boolean): void
  /** An ERROR message; a HALT may come instead of WELCOME (the receiver refused the sender). */
  onServerError(category: ErrorCategory, fsn: bigint, message: string): void
  /** Called once when the connection is gone, with the reason (after WELCOME; before, `ready` rejects). */
  onClose(reason: Error): void
}

/** Bytes handed to the socket but not yet written, above which the sender waits. */
const WRITE_HIGH_WATER_BYTES = 4 * 1024 * 1024
const CLOSE_PROTOCOL_ERROR = 1002
const CLOSE_TOO_BIG = 1009

export class Link {
  /** The receiver's largest accepted DATA message, from WELCOME. */
  maxFrameBytes = 0
  private pendingBytes = 0
  private writers: Array<() => void> = []
  private lastHeard = Date.now()
  private readonly keepalive: NodeJS.Timeout
  private failure: Error | undefined
  private ended = false
  private resolveClosed!: (reason: Error) => void
  /** Resolves with the reason once the connection is gone. */
  readonly closed = new Promise<Error>((resolve) => {
    this.resolveClosed = resolve
  })

  private constructor(
    private readonly ws: WebSocket,
    private readonly endpoint: Endpoint,
    keepaliveMs: number,
    /** Resolves when the receiver's WELCOME arrived; rejects with why the connection never got there. */
    readonly ready: Promise<void>,
    private readonly handlers: LinkHandlers,
  ) {
    ready.catch(() => {})
    this.keepalive = setInterval(
      () => {
        if (Date.now() - this.lastHeard > keepaliveMs) {
          this.fail(
            new ConnectionLostError(endpoint.addr, `no traffic from the receiver for ${keepaliveMs} ms`),
            0,
          )
        } else if (ws.readyState === WebSocket.OPEN) {
          ws.ping()
        }
      },
      Math.max(10, keepaliveMs >> 1),
    )
  }

  /**
   * Starts connecting: upgrade, HELLO, then `ready` resolves when the receiver's WELCOME arrives (or
   * rejects with why the connection failed). After that, `handlers.onClose` reports the end. The slot id
   * goes in HELLO when the receiver speaks version 2; a version 1 receiver dedups by sender id alone.
   */
  static connect(
    endpoint: Endpoint,
    senderId: string,
    slotId: string,
    durableAck: boolean,
    keepaliveMs: number,
    handlers: LinkHandlers,
  ): Link {
    const ws = new WebSocket(endpoint.url, [...SUBPROTOCOLS], {
      headers: endpoint.token === undefined ? {} : { authorization: `Bearer ${endpoint.token}` },
      perMessageDeflate: false,
      handshakeTimeout: keepaliveMs,
      rejectUnauthorized: endpoint.rejectUnauthorized,
      ...(endpoint.ca ? { ca: endpoint.ca } : {}),
    })
    let welcomed = false
    let welcome!: () => void
    let refuse!: (e: Error) => void
    const ready = new Promise<void>((resolve, reject) => {
      welcome = resolve
      refuse = reject
    })
    const link = new Link(ws, endpoint, keepaliveMs, ready, {
      ...handlers,
      onClose: (reason) => (welcomed ? handlers.onClose(reason) : refuse(reason)),
    })
    ws.on('unexpected-response', (req, res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        if (body.length < 500) body += chunk
      })
      res.on('end', () => {
        link.fail(upgradeRefusal(endpoint.addr, res.statusCode ?? 0, body.trim()), 0)
        req.destroy()
      })
    })
    ws.on('open', () => {
      if (!SUBPROTOCOLS.includes(ws.protocol)) {
        link.fail(
          new ProtocolVersionError(endpoint.addr, `it accepted subprotocol '${ws.protocol}'`),
          CLOSE_PROTOCOL_ERROR,
        )
        return
      }
      ws.send(encodeHello(senderId, durableAck, ws.protocol === SUBPROTOCOL ? slotId : undefined))
    })
    ws.on('message', (data, isBinary) => {
      link.lastHeard = Date.now()
      if (!isBinary)
        return link.fail(new ProtocolViolationError('receiver sent a text message'), CLOSE_PROTOCOL_ERROR)
      try {
        const msg = decodeServerMessage(data as Buffer)
        if (msg.type === 'welcome') {
          if (welcomed) throw new ProtocolViolationError('second WELCOME on one connection')
          welcomed = true
          link.maxFrameBytes = msg.maxFrameBytes
          welcome()
        } else if (!welcomed && msg.type === 'error' && msg.category === 'HALT') {
          // The receiver refused this sender (its id is another slot's); it closes the connection next.
          handlers.onServerError(msg.category, msg.fsn, msg.message)
        } else if (!welcomed) {
          throw new ProtocolViolationError(`receiver sent ${msg.type} before WELCOME`)
        } else if (msg.type === 'error') {
          handlers.onServerError(msg.category, msg.fsn, msg.message)
        } else {
          handlers.onAck(msg.fsn, msg.type === 'durableAck')
        }
      } catch (e) {
        const error =
          (e as { code?: string }).code === 'SF_WIRE_MALFORMED'
            ? new ProtocolViolationError((e as Error).message, { cause: e })
            : (e as Error)
        link.fail(error, CLOSE_PROTOCOL_ERROR)
      }
    })
    ws.on('pong', () => {
      link.lastHeard = Date.now()
    })
    ws.on('error', (e) => {
      link.failure ??= new ConnectionLostError(endpoint.addr, e.message, { cause: e })
    })
    ws.on('close', (code, reason) => link.end(code, reason.toString()))
    return link
  }

  get isOpen(): boolean {
    return !this.ended && this.ws.readyState === WebSocket.OPEN
  }

  /** Queues a message; call `writable()` before the next one to respect flow control. */
  send(message: Buffer): void {
    this.pendingBytes += message.length
    this.ws.send(message, () => {
      this.pendingBytes -= message.length
      if (this.pendingBytes <= WRITE_HIGH_WATER_BYTES) this.wakeWriters()
    })
  }

  /** Resolves when the socket can take more data, or the link has ended. */
  async writable(): Promise<void> {
    while (this.pendingBytes > WRITE_HIGH_WATER_BYTES && !this.ended) {
      await new Promise<void>((resolve) => this.writers.push(resolve))
    }
  }

  /** Ends the connection because of `error`; close code 0 cuts the socket without a closing handshake. */
  fail(error: Error, closeCode: number): void {
    this.failure ??= error
    if (closeCode === 0 || this.ws.readyState !== WebSocket.OPEN) {
      this.ws.terminate()
    } else {
      this.ws.close(closeCode, closeReason(error.message))
      setTimeout(() => this.ws.terminate(), 1000).unref()
    }
  }

  /** Closes normally (the sender is stopping). */
  close(): void {
    this.fail(new ConnectionLostError(this.endpoint.addr, 'closed by the sender'), 1000)
  }

  private end(code: number, reason: string): void {
    if (this.ended) return
    this.ended = true
    clearInterval(this.keepalive)
    this.wakeWriters()
    const why = this.failure ?? whyClosed(this.endpoint.addr, code, reason)
    this.resolveClosed(why)
    this.handlers.onClose(why)
  }

  private wakeWriters(): void {
    for (const w of this.writers.splice(0)) w()
  }
}

function upgradeRefusal(addr: string, status: number, body: string): Error {
  if (status === 401 || status === 403) return new SenderAuthError(addr, status, body)
  if (status === 426) return new ProtocolVersionError(addr, body || `HTTP ${status}`)
  return new ConnectionLostError(
    addr,
    `the WebSocket upgrade was answered with HTTP ${status}${body ? `: ${body}` : ''}`,
  )
}

function whyClosed(addr: string, code: number, reason: string): Error {
  if (code === CLOSE_PROTOCOL_ERROR)
    return new ProtocolViolationError(`receiver ${addr} closed the connection: ${reason}`)
  if (code === CLOSE_TOO_BIG) {
    return new ProtocolViolationError(
      `receiver ${addr} refused a message as too large (${reason || 'close code 1009'})`,
    )
  }
  return new ConnectionLostError(addr, `closed with code ${code}${reason ? ` (${reason})` : ''}`)
}
