/**
 * Where the receiver's upgrade requests come from: a server of its own, listening on a port, or an
 * HTTP(S) server the application already runs, shared with its other handlers.
 *
 * Invariants: the receiver only ever handles `upgrade` events, and of those only the ones for its `path`
 * (all, without one). On a shared server it adds no `request` handler and never answers an upgrade for
 * another path while another `upgrade` listener could own it; closing removes its listener and leaves
 * the shared server running.
 */
import { createServer as createHttpServer, type Server as HttpServer, type IncomingMessage } from 'node:http'
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https'
import type { Duplex } from 'node:stream'
import { writeRefusal } from './receiver-handshake.js'
import type { ReceiverListenOptions } from './receiver-options.js'
import { SUBPROTOCOL } from './wire.js'

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void

export interface Endpoint {
  readonly port: number
  readonly url: string
  /** Stops taking upgrade requests; resolves once a server of its own has closed. */
  close(): Promise<void>
}

const DEFAULT_HOST = '127.0.0.1'

export async function listenEndpoint(
  options: ReceiverListenOptions,
  path: string | undefined,
  onUpgrade: UpgradeHandler,
): Promise<Endpoint> {
  const server: HttpServer = options.tls ? createHttpsServer(options.tls) : createHttpServer()
  // Nothing but WebSocket is served here; say so to a browser or a misconfigured HTTP client.
  server.on('request', (_req, res) => {
    res
      .writeHead(426, { 'content-type': 'text/plain' })
      .end(`this is a store-and-forward receiver: connect with WebSocket subprotocol ${SUBPROTOCOL}\n`)
  })
  server.on('upgrade', forPath(server, path, onUpgrade))
  const host = options.host ?? DEFAULT_HOST
  await listen(server, options.port, host)
  const port = portOf(server) ?? options.port
  const url = urlOf(options.tls !== undefined, host, port, path)
  return {
    port,
    url,
    close: () =>
      server.listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve(),
  }
}

export function attachEndpoint(
  server: HttpServer | HttpsServer,
  path: string | undefined,
  onUpgrade: UpgradeHandler,
): Endpoint {
  const listener = forPath(server, path, onUpgrade)
  server.on('upgrade', listener)
  // Read at use: the application may start listening after attaching, or listen again elsewhere.
  return {
    get port() {
      return portOf(server) ?? 0
    },
    get url() {
      return urlOf(server instanceof HttpsServer, hostOf(server) ?? DEFAULT_HOST, portOf(server) ?? 0, path)
    },
    async close() {
      server.off('upgrade', listener)
    },
  }
}

function forPath(server: HttpServer | HttpsServer, path: string | undefined, onUpgrade: UpgradeHandler) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    if (path === undefined || pathnameOf(req) === path) onUpgrade(req, socket, head)
    // With no other upgrade listener nobody would answer, and the client would wait until it times out.
    else if (server.listenerCount('upgrade') === 1) {
      writeRefusal(socket, { status: 404, statusText: 'Not Found', body: 'no WebSocket endpoint here' })
    }
  }
}

function pathnameOf(req: IncomingMessage): string {
  const url = req.url ?? '/'
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

function listen(server: HttpServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

function portOf(server: HttpServer | HttpsServer): number | undefined {
  const address = server.address()
  return typeof address === 'object' && address !== null ? address.port : undefined
}

function hostOf(server: HttpServer | HttpsServer): string | undefined {
  const address = server.address()
  return typeof address === 'object' && address !== null ? address.address : undefined
}

function urlOf(tls: boolean, host: string, port: number, path: string | undefined): string {
  return `${tls ? 'wss' : 'ws'}://${host.includes(':') ? `[${host}]` : host}:${port}${path ?? ''}`
}
