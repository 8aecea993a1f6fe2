/** The metrics endpoint: `/metrics` (Prometheus text) and `/healthz`, on the address asked for. */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ConfigError } from '@skippr/connector-api'
import type { ListenAddress } from './address.js'
import type { SyncMetrics } from './sync-metrics.js'

export interface MetricsServer {
  /** `http://host:port`, the port the OS gave when 0 was asked for. */
  readonly url: string
  close(): Promise<void>
}

export async function serveMetrics(metrics: SyncMetrics, address: ListenAddress): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end()
    } else if (path === '/metrics') {
      metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        (error: unknown) => response.writeHead(500).end(String(error)),
      )
    } else if (path === '/healthz') {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(`${JSON.stringify({ status: 'ok', pipelines: metrics.health() })}\n`)
    } else {
      response.writeHead(404).end()
    }
  })
  server.listen(address.port, address.host)
  try {
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([error]) => Promise.reject(error)),
    ])
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new ConfigError(
      `--metrics-addr ${address.host}:${address.port}: cannot listen (${code ?? (error as Error).message}); choose another port or free this one`,
      { cause: error },
    )
  }
  // The sync decides when the process ends, not an open scrape connection.
  server.unref()
  const { port } = server.address() as AddressInfo
  const host = address.host.includes(':') ? `[${address.host}]` : address.host
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
