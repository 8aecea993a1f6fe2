/** An HTTP server of the test process on 127.0.0.1, on a port the OS chooses. */
import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ServedOnLoopback {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string
  /** Closes the server and its open (keep-alive) connections; calling it twice is harmless. */
  stop(): Promise<void>
}

export async function serveOnLoopback(server: Server): Promise<ServedOnLoopback> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  let stopped: Promise<void> | undefined
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop() {
      stopped ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      })
      return stopped
    },
  }
}
