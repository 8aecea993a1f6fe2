/**
 * The receiving end of the store-and-forward protocol. It authenticates senders, delivers each sender's
 * frames to the application in FSN order at most once per receiver state (dedup by sender id and FSN),
 * and acknowledges frames only after the application's `onFrames` has resolved.
 */
import { timingSafeEqual } from 'node:crypto'
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { Duplex } from 'node:stream'
import { WebSocket, WebSocketServer } from 'ws'
import { ProtocolViolationError, WireFormatError } from './errors.js'
import { defaultLogger } from './logger.js'
import {
  closeReason,
  decodeClientMessage,
  encodeAck,
  encodeError,
  encodeWelcome,
  type Frame,
  SUBPROTOCOL,
} from './wire.js'

export interface ReceivedBatch {
  senderId: string
  /** Consecutive, never-before-delivered frames of one sender, in FSN order. */
  frames: Frame[]
}

/** What `onFrames` may return: frames it refuses (reported to the sender as DROP errors, then acked). */
export interface FramesOutcome {
  drop?: Array<{ fsn: bigint; reason: string }>
}

export interface ReceiverOptions {
  /** TCP port; 0 picks a free one (read it back from `receiver.port`). */
  port: number
  host?: string
  /**
   * Handles a batch. The frames are acknowledged once the promise resolves. Throw a `HaltSenderError`
   * (code `SF_HALT_REQUESTED`) to halt the sender; any other error closes the connection so the sender
   * retries the same frames later.
   */
  onFrames(batch: ReceivedBatch): Promise<FramesOutcome | undefined> | FramesOutcome | undefined
  /** Require `Authorization: Bearer <token>` on the upgrade request. */
  token?: string
  /** Serve `wss`. */
  tls?: { key: string | Buffer; cert: string | Buffer }
  /** Largest DATA message accepted, in bytes (default 16 MiB); larger ones close the connection. */
  maxFrameBytes?: number
  /**
   * The highest FSN the application already holds for a sender, consulted when that sender connects, so
   * dedup survives a receiver restart when the application persists what it received.
   */
  delivered?(senderId: string): bigint | Promise<bigint>
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

export interface Receiver {
  readonly port: number
  /** `ws://host:port` or `wss://host:port`. */
  readonly url: string
  /** Confirms that every frame of `senderId` up to `fsn` is durable (with `durableAck: 'manual'`). */
  markDurable(senderId: string, fsn: bigint): void
  close(): Promise<void>
}

const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024
const HELLO_TIMEOUT_MS = 10_000
/** Received-but-unhandled bytes per connection above which the socket stops reading. */
const QUEUE_HIGH_WATER_BYTES = 8 * 1024 * 1024
/** Bytes handed to one `onFrames` call at most (a single larger frame still goes alone). */
const BATCH_BYTES = 4 * 1024 * 1024

const CLOSE_PROTOCOL_ERROR = 1002
const CLOSE_APPLICATION_ERROR = 1011
const CLOSE_SUPERSEDED = 4000
const CLOSE_HALTED = 4001

interface SenderState {
  delivered: bigint
  durable: bigint
  /** Serialises handling across the connections of one sender (an old one may still be in `onFrames`). */
  turn: Promise<void>
  current: Connection | undefined
  /** Runs `forgetSendersAfterMs` after the sender's last connection closed. */
  forgetTimer: NodeJS.Timeout | undefined
}

interface Connection {
  ws: WebSocket
  senderId: string | undefined
  durableAck: boolean
  /** Lowest FSN the next DATA message may start with; undefined until the first one. */
  nextFsn: bigint | undefined
  queue: Frame[]
  queuedBytes: number
  draining: boolean
  closed: boolean
}

export async function createReceiver(options: ReceiverOptions): Promise<Receiver> {
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
  const durableMode = options.durableAck ?? 'with-ack'
  const report =
    options.onError ?? ((e, id) => defaultLogger.warn(`receiver: ${e.message}`, { senderId: id }))
  const senders = new Map<string, SenderState>()
  const connections = new Set<Connection>()

  const server: Server = options.tls ? createHttpsServer(options.tls) : createHttpServer()
  server.on('request', (_req, res) => {
    res
      .writeHead(426, { 'content-type': 'text/plain' })
      .end(`this is a store-and-forward receiver: connect with WebSocket subprotocol ${SUBPROTOCOL}\n`)
  })
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxFrameBytes,
    perMessageDeflate: false,
    handleProtocols: () => SUBPROTOCOL,
  })
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refusal = refuseUpgrade(req, options.token)
    if (refusal) {
      socket.end(
        `HTTP/1.1 ${refusal.status} ${refusal.statusText}\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(refusal.body)}\r\n\r\n${refusal.body}`,
      )
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws))
  })

  function stateOf(senderId: string): SenderState {
    let state = senders.get(senderId)
    if (!state) {
      state = {
        delivered: 0n,
        durable: 0n,
        turn: Promise.resolve(),
        current: undefined,
        forgetTimer: undefined,
      }
      senders.set(senderId, state)
    }
    return state
  }

  /** Drops an idle sender's state once its handling has settled and it is still without a connection. */
  function forgetLater(senderId: string, state: SenderState): void {
    const after = options.forgetSendersAfterMs
    if (after === undefined) return
    clearTimeout(state.forgetTimer)
    state.forgetTimer = setTimeout(() => {
      void state.turn.then(() => {
        if (state.current === undefined && senders.get(senderId) === state) senders.delete(senderId)
      })
    }, after)
    state.forgetTimer.unref()
  }

  function accept(ws: WebSocket): void {
    const conn: Connection = {
      ws,
      senderId: undefined,
      durableAck: false,
      nextFsn: undefined,
      queue: [],
      queuedBytes: 0,
      draining: false,
      closed: false,
    }
    connections.add(conn)
    const helloTimer = setTimeout(
      () => violation(conn, `no HELLO within ${HELLO_TIMEOUT_MS} ms`),
      HELLO_TIMEOUT_MS,
    )
    ws.on('message', (data, isBinary) => {
      if (conn.closed) return
      if (!isBinary) return violation(conn, 'text message received; the protocol uses binary messages')
      try {
        const msg = decodeClientMessage(data as Buffer)
        if (msg.type === 'hello') {
          clearTimeout(helloTimer)
          onHello(conn, msg.senderId, msg.durableAck)
        } else {
          onData(conn, msg.frames)
        }
      } catch (e) {
        violation(
          conn,
          e instanceof WireFormatError || e instanceof ProtocolViolationError ? e.message : String(e),
        )
      }
    })
    ws.on('error', (e) => {
      // ws closes the socket itself (1009 for an oversized message); report it in protocol terms.
      const detail =
        (e as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
          ? `message larger than maxFrameBytes (${maxFrameBytes})`
          : e.message
      report(new ProtocolViolationError(detail, { cause: e }), conn.senderId)
    })
    ws.on('close', () => {
      clearTimeout(helloTimer)
      conn.closed = true
      connections.delete(conn)
      const state = conn.senderId === undefined ? undefined : senders.get(conn.senderId)
      if (state?.current === conn) {
        state.current = undefined
        forgetLater(conn.senderId!, state)
      }
    })
  }

  function onHello(conn: Connection, senderId: string, durableAck: boolean): void {
    if (conn.senderId !== undefined) throw new ProtocolViolationError('second HELLO on one connection')
    conn.senderId = senderId
    conn.durableAck = durableAck
    const state = stateOf(senderId)
    clearTimeout(state.forgetTimer)
    const previous = state.current
    state.current = conn
    if (previous && !previous.closed) {
      previous.closed = true
      previous.ws.close(CLOSE_SUPERSEDED, 'superseded by a newer connection of the same sender')
    }
    // WELCOME only after the application told us what it holds, so no DATA can race the dedup seed.
    state.turn = state.turn
      .then(async () => {
        if (options.delivered) {
          const held = await options.delivered(senderId)
          if (held > state.delivered) state.delivered = held
          if (durableMode === 'with-ack' && held > state.durable) state.durable = held
        }
        if (!conn.closed) conn.ws.send(encodeWelcome(maxFrameBytes))
      })
      .catch((e) => failConnection(conn, e))
  }

  function onData(conn: Connection, frames: Frame[]): void {
    if (conn.senderId === undefined) throw new ProtocolViolationError('DATA before HELLO')
    const first = frames[0]!.fsn
    if (first === 0n) throw new ProtocolViolationError('DATA with FSN 0; FSNs start at 1')
    // Within a connection FSNs only go up; a gap is a range the sender's slot lost and reported.
    if (conn.nextFsn !== undefined && first < conn.nextFsn) {
      throw new ProtocolViolationError(
        `DATA starts at FSN ${first}, below the next expected FSN ${conn.nextFsn}`,
      )
    }
    conn.nextFsn = first + BigInt(frames.length)
    for (const f of frames) {
      conn.queue.push(f)
      conn.queuedBytes += f.payload.length
    }
    if (conn.queuedBytes > QUEUE_HIGH_WATER_BYTES) conn.ws.pause()
    if (!conn.draining) drain(conn)
  }

  function drain(conn: Connection): void {
    conn.draining = true
    const state = stateOf(conn.senderId!)
    state.turn = state.turn
      .then(async () => {
        while (conn.queue.length > 0 && !conn.closed) await handleBatch(conn, state, takeBatch(conn))
      })
      .catch((e) => failConnection(conn, e))
      .finally(() => {
        conn.draining = false
      })
  }

  function takeBatch(conn: Connection): Frame[] {
    let bytes = 0
    let n = 0
    while (n < conn.queue.length && (n === 0 || bytes + conn.queue[n]!.payload.length <= BATCH_BYTES)) {
      bytes += conn.queue[n]!.payload.length
      n++
    }
    conn.queuedBytes -= bytes
    if (conn.queuedBytes <= QUEUE_HIGH_WATER_BYTES / 2) conn.ws.resume()
    return conn.queue.splice(0, n)
  }

  async function handleBatch(conn: Connection, state: SenderState, batch: Frame[]): Promise<void> {
    const last = batch[batch.length - 1]!.fsn
    const fresh = batch.filter((f) => f.fsn > state.delivered)
    if (fresh.length > 0) {
      let outcome: FramesOutcome | undefined
      try {
        outcome = (await options.onFrames({ senderId: conn.senderId!, frames: fresh })) ?? undefined
      } catch (e) {
        if ((e as { code?: unknown }).code === 'SF_HALT_REQUESTED')
          return halt(conn, fresh[0]!.fsn, (e as Error).message)
        throw e
      }
      state.delivered = last
      if (durableMode === 'with-ack') state.durable = last
      for (const d of outcome?.drop ?? []) send(conn, encodeError('DROP', d.fsn, d.reason))
    }
    send(conn, encodeAck(last))
    if (conn.durableAck) {
      const durable = minFsn(state.durable, last)
      if (durable > 0n) send(conn, encodeAck(durable, true))
    }
  }

  function send(conn: Connection, message: Buffer): void {
    if (!conn.closed && conn.ws.readyState === WebSocket.OPEN) conn.ws.send(message)
  }

  function halt(conn: Connection, fsn: bigint, message: string): void {
    send(conn, encodeError('HALT', fsn, message))
    conn.queue.length = 0
    closeConnection(conn, CLOSE_HALTED, 'sender halted by the application')
  }

  function violation(conn: Connection, detail: string): void {
    report(new ProtocolViolationError(detail), conn.senderId)
    closeConnection(conn, CLOSE_PROTOCOL_ERROR, detail)
  }

  function failConnection(conn: Connection, e: unknown): void {
    const error = e instanceof Error ? e : new Error(String(e))
    report(error, conn.senderId)
    closeConnection(conn, CLOSE_APPLICATION_ERROR, 'receiver application failed; the sender will retry')
  }

  function closeConnection(conn: Connection, code: number, reason: string): void {
    if (conn.closed) return
    conn.closed = true
    conn.ws.close(code, closeReason(reason))
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : options.port
  const host = options.host ?? '127.0.0.1'

  return {
    port,
    url: `${options.tls ? 'wss' : 'ws'}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    markDurable(senderId, fsn) {
      const state = stateOf(senderId)
      if (fsn <= state.durable) return
      state.durable = fsn
      const conn = state.current
      if (conn?.durableAck) send(conn, encodeAck(minFsn(fsn, state.delivered), true))
    },
    async close() {
      const closing = server.listening
        ? new Promise<void>((resolve) => server.close(() => resolve()))
        : Promise.resolve()
      const sockets = [...connections].map((conn) => conn.ws)
      for (const conn of connections) closeConnection(conn, 1001, 'receiver shutting down')
      // Give peers a moment for the closing handshake; a stalled peer is cut off.
      await Promise.race([Promise.all(sockets.map(closedPromise)), delay(1000)])
      for (const ws of sockets) ws.terminate()
      for (const state of senders.values()) clearTimeout(state.forgetTimer)
      wss.close()
      await closing
    },
  }
}

function minFsn(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}

function closedPromise(ws: WebSocket): Promise<void> {
  return ws.readyState === WebSocket.CLOSED
    ? Promise.resolve()
    : new Promise((resolve) => ws.once('close', () => resolve()))
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

function refuseUpgrade(
  req: IncomingMessage,
  token: string | undefined,
): { status: number; statusText: string; body: string } | undefined {
  if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
    return { status: 401, statusText: 'Unauthorized', body: 'missing or wrong bearer token' }
  }
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim())
  if (!offered.includes(SUBPROTOCOL)) {
    return {
      status: 426,
      statusText: 'Upgrade Required',
      body: `unsupported protocol; this receiver speaks ${SUBPROTOCOL}`,
    }
  }
  return undefined
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '')
  const expected = Buffer.from(`Bearer ${token}`)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
