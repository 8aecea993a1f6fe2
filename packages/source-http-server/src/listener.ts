/**
 * The HTTP(S) server a configured `listen` address serves: the source's while its sync runs, the
 * standby's while the sync waits for the writer lease. Answers are one-line JSON bodies.
 */
import { readFileSync } from 'node:fs'
import {
  createServer as createHttpServer,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { resolve } from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import type { Answer } from './answer.js'
import { type HttpServerConfig, listenAddress } from './config.js'

/** Listening on `config.listen` once it resolves; TLS when `tls_cert` and `tls_key` are set. */
export async function openListener(
  config: HttpServerConfig,
  configDir: string,
  handler: RequestListener,
): Promise<Server> {
  const tls = tlsOptions(config, configDir)
  const server = tls ? createHttpsServer(tls, handler) : createHttpServer(handler)
  const { host, port } = listenAddress(config.listen)
  await new Promise<void>((done, fail) => {
    server.once('error', fail)
    server.listen(port, host, () => {
      server.off('error', fail)
      done()
    })
  })
  return server
}

/** The TLS files, read; undefined without TLS. Throws a ConfigError naming a file it cannot read. */
export function tlsOptions(
  config: HttpServerConfig,
  configDir: string,
): { cert: Buffer; key: Buffer } | undefined {
  const { tls_cert, tls_key } = config
  if (!tls_cert || !tls_key) return undefined
  const read = (field: string, file: string) => {
    try {
      return readFileSync(resolve(configDir, file))
    } catch (error) {
      throw new ConfigError(
        `HttpServer ${field}: cannot read ${file} (${(error as NodeJS.ErrnoException).code})`,
      )
    }
  }
  return { cert: read('tls_cert', tls_cert), key: read('tls_key', tls_key) }
}

/** Sends `answer`; `last` closes the connection after it. */
export function send(response: ServerResponse, answer: Answer, last: boolean): void {
  if (response.headersSent) return
  const body = `${JSON.stringify(answer.body)}\n`
  // A request refused before its body was read leaves bytes on the connection: close it.
  const close = last || !response.req.complete
  response.writeHead(answer.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(close ? { connection: 'close' } : {}),
    ...answer.headers,
  })
  response.end(body)
}

/** Stops listening and ends every connection, idle or not. */
export function closeListener(server: Server): Promise<void> {
  return new Promise<void>((done) => {
    server.close(() => done())
    server.closeIdleConnections()
  })
}
