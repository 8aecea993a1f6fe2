/** An in-memory DynamoDB on 127.0.0.1 for tests: dynalite (npm), in the test process. */
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import { serveOnLoopback } from './in-process-server.js'

export interface DynaliteServer {
  /** `http://127.0.0.1:<port>`; any region and credentials are accepted (dynalite checks no signature). */
  readonly endpoint: string
  /** Closes open connections too. Calling it twice is harmless. */
  stop(): Promise<void>
}

// dynalite is CommonJS and ships no types: `dynalite()` returns an unstarted http.Server, in memory.
const dynalite = createRequire(import.meta.url)('dynalite') as () => Server

/**
 * Starts dynalite with no tables, in memory, on a port the OS chooses. Tables stay CREATING for
 * dynalite's default 0.5 s, so a client must wait for ACTIVE as it must on AWS.
 */
export async function startDynalite(): Promise<DynaliteServer> {
  // dynalite's close also closes its store; it waits for open (keep-alive) connections first.
  return serveOnLoopback(dynalite())
}
