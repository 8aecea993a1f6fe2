/**
 * The receiving end of the store-and-forward protocol. It authenticates senders, delivers each sender's
 * frames to the application in FSN order at most once per receiver state (dedup by sender id and FSN,
 * a sender id belonging to one slot), and acknowledges frames only after the application's `onFrames`
 * has resolved.
 *
 * This file only composes the parts: the endpoint (a server of its own, or an attached one), the
 * handshake check, one `ReceiverConnection` per WebSocket, and the per-sender sessions they share. Every
 * connection is tracked from its upgrade until its close, so `close()` can end them all.
 */
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { type WebSocket, WebSocketServer } from 'ws'
import { ReceiverConnection } from './receiver-connection.js'
import { attachEndpoint, type Endpoint, listenEndpoint, type UpgradeHandler } from './receiver-endpoint.js'
import { refuseUpgrade, writeRefusal } from './receiver-handshake.js'
import { type Receiver, type ReceiverOptions, resolveSettings } from './receiver-options.js'
import { SenderSessions } from './sender-sessions.js'
import { SUBPROTOCOLS } from './wire.js'

export type {
  DeliveredPosition,
  FramesOutcome,
  ReceivedBatch,
  Receiver,
  ReceiverAttachOptions,
  ReceiverBaseOptions,
  ReceiverListenOptions,
  ReceiverOptions,
} from './receiver-options.js'

/** How long `close()` waits for peers to finish the closing handshake before cutting them off. */
const CLOSE_GRACE_MS = 1000
const CLOSE_GOING_AWAY = 1001

export async function createReceiver(options: ReceiverOptions): Promise<Receiver> {
  const settings = resolveSettings(options)
  const sessions = new SenderSessions(options.forgetSendersAfterMs)
  const connections = new Set<ReceiverConnection>()
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: settings.maxFrameBytes,
    perMessageDeflate: false,
    // The highest version the sender offers (the handshake check let only known ones through).
    handleProtocols: (offered) => SUBPROTOCOLS.find((p) => offered.has(p)) ?? false,
  })
  const accept = (ws: WebSocket): void => {
    connections.add(new ReceiverConnection(ws, settings, sessions, (conn) => connections.delete(conn)))
  }
  const onUpgrade: UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refusal = refuseUpgrade(req, options.token)
    if (refusal) writeRefusal(socket, refusal)
    else wss.handleUpgrade(req, socket, head, accept)
  }
  const endpoint = await openEndpoint(options, onUpgrade)

  return {
    get port() {
      return endpoint.port
    },
    get url() {
      return endpoint.url
    },
    markDurable(senderId, fsn) {
      sessions.get(senderId).markDurable(fsn)
    },
    counters() {
      const { counters } = settings
      return { ...counters, errorsSent: { ...counters.errorsSent } }
    },
    async close() {
      const closing = endpoint.close()
      const sockets = [...connections].map((conn) => conn.ws)
      for (const conn of connections) conn.close(CLOSE_GOING_AWAY, 'receiver shutting down')
      // Give peers a moment for the closing handshake; a stalled peer is cut off.
      await Promise.race([Promise.all(sockets.map(closedPromise)), delay(CLOSE_GRACE_MS)])
      for (const ws of sockets) ws.terminate()
      sessions.stopTimers()
      wss.close()
      await closing
    },
  }
}

function openEndpoint(options: ReceiverOptions, onUpgrade: UpgradeHandler): Promise<Endpoint> {
  if (!('server' in options)) return listenEndpoint(options, options.path, onUpgrade)
  if (options.port !== undefined) {
    throw new TypeError('createReceiver: give either `port` (a server of its own) or `server`, not both')
  }
  return Promise.resolve(attachEndpoint(options.server, options.path, onUpgrade))
}

function closedPromise(ws: WebSocket): Promise<void> {
  return ws.readyState === ws.CLOSED
    ? Promise.resolve()
    : new Promise((resolve) => ws.once('close', () => resolve()))
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
