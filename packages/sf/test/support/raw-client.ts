/** A bare protocol client built from the wire codecs, to drive the receiver message by message. */
import { WebSocket } from 'ws'
import { decodeServerMessage, encodeHello, type ServerMessage, SUBPROTOCOL } from '../../src/wire.js'

export interface RawClient {
  ws: WebSocket
  messages: ServerMessage[]
  /** Resolves with the first received message (from now on or already received) that matches. */
  waitFor(match: (m: ServerMessage) => boolean, timeoutMs?: number): Promise<ServerMessage>
  closed: Promise<{ code: number; reason: string }>
}

export async function connectRaw(
  url: string,
  options: { token?: string; protocol?: string; ca?: Buffer } = {},
): Promise<RawClient> {
  const ws = new WebSocket(url, options.protocol ?? SUBPROTOCOL, {
    headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
    ...(options.ca ? { ca: options.ca } : {}),
  })
  const messages: ServerMessage[] = []
  const waiters: Array<() => void> = []
  ws.on('message', (data) => {
    messages.push(decodeServerMessage(data as Buffer))
    for (const w of waiters.splice(0)) w()
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  )
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (c: Buffer) => {
        body += c.toString()
      })
      res.on('end', () =>
        reject(Object.assign(new Error(`HTTP ${res.statusCode}: ${body}`), { status: res.statusCode })),
      )
    })
  })
  function waitFor(match: (m: ServerMessage) => boolean, timeoutMs = 5000): Promise<ServerMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching message within ${timeoutMs} ms`)),
        timeoutMs,
      )
      const check = (): void => {
        const found = messages.find(match)
        if (found) {
          clearTimeout(timer)
          resolve(found)
        } else waiters.push(check)
      }
      check()
    })
  }
  return { ws, messages, waitFor, closed }
}

/** HELLO, then waits for WELCOME; with `slotId`, HELLO names that slot (protocol version 2). */
export async function helloRaw(
  client: RawClient,
  senderId: string,
  durableAck = false,
  slotId?: string,
): Promise<void> {
  client.ws.send(encodeHello(senderId, durableAck, slotId))
  await client.waitFor((m) => m.type === 'welcome')
}
