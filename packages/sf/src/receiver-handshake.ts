/**
 * Which upgrade requests become protocol connections: the bearer token (when one is configured) and the
 * protocol version, offered as the WebSocket subprotocol. A refused request gets a plain HTTP answer
 * before any WebSocket exists, which the sender maps to a terminal error (401 auth, 426 version).
 */
import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { SUBPROTOCOLS } from './wire.js'

export interface Refusal {
  status: number
  statusText: string
  body: string
}

export function refuseUpgrade(req: IncomingMessage, token: string | undefined): Refusal | undefined {
  if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
    return { status: 401, statusText: 'Unauthorized', body: 'missing or wrong bearer token' }
  }
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim())
  if (!SUBPROTOCOLS.some((p) => offered.includes(p))) {
    return {
      status: 426,
      statusText: 'Upgrade Required',
      body: `unsupported protocol; this receiver speaks ${SUBPROTOCOLS.join(', ')}`,
    }
  }
  return undefined
}

/** Answers an upgrade request with a plain HTTP response and closes the socket. */
export function writeRefusal(socket: Duplex, refusal: Refusal): void {
  socket.end(
    `HTTP/1.1 ${refusal.status} ${refusal.statusText}\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(refusal.body)}\r\n\r\n${refusal.body}`,
  )
}

/** Constant-time, so the answer's timing does not reveal how much of a guessed token was right. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '')
  const expected = Buffer.from(`Bearer ${token}`)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
