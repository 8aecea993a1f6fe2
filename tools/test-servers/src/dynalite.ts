/** An in-memory DynamoDB on 127.0.0.1 for tests: dynalite (npm), in the test process. */
import { once } from 'node:events'
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'

export interface DynaliteServer {
  /** `http://127.0.0.1:<port>`; any region and credentials are accepted (dynalite checks no signature). */
  readonly endpoint: string
  /** Closes open connections too. Calling it twice is harmless. */
  stop(): Promise<void>
}

const HOST = '127.0.0.1'
// dynalite is CommonJS and ships no types: `dynalite()` returns an unstarted http.Server, in memory.
const dynalite = createRequire(import.meta.url)('dynalite') as () => Server

/**
 * Starts dynalite with no tables, in memory, on a port the OS chooses. Tables stay CREATING for
 * dynalite's default 0.5 s, so a client must wait for ACTIVE as it must on AWS.
 */
export async function startDynalite(): Promise<DynaliteServer> {
  const server = dynalite()
  server.listen(0, HOST)
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  let stopped: Promise<void> | undefined
  return {
    endpoint: `http://${HOST}:${port}`,
    stop() {
      stopped ??= new Promise<void>((resolve, reject) => {
        // dynalite's close also closes its store; it waits for open (keep-alive) connections first.
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      })
      return stopped
    },
  }
}
