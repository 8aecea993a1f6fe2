/** A clustered-WAL peer in a child process of its own (lib/wal-peer-server.mjs), with its pid for lib/server-cpu.ts. */
import { fileURLToPath } from 'node:url'
import { startJsonLineChild } from './child-server.js'

export interface WalPeerProcess {
  /** `ws://127.0.0.1:<port>`, what a leader's `peers` lists. */
  readonly url: string
  readonly pid: number
  /** Where its copies live. */
  readonly dataDir: string
  stop(): Promise<void>
}

const SCRIPT = fileURLToPath(new URL('wal-peer-server.mjs', import.meta.url))

export async function startWalPeerProcess(dataDir: string, secret: string): Promise<WalPeerProcess> {
  const child = await startJsonLineChild<{ url: string }>('the WAL peer', SCRIPT, [dataDir, secret])
  return { url: child.ready.url, pid: child.pid, dataDir, stop: () => child.stop() }
}
