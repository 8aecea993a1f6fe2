/** dynalite in a child process of its own (lib/dynalite-server.mjs), with its pid for lib/server-cpu.ts. */
import { fileURLToPath } from 'node:url'
import { startJsonLineChild } from './child-server.js'

export interface DynaliteProcess {
  /** `http://127.0.0.1:<port>`; dynalite takes any region and credentials. */
  readonly endpoint: string
  readonly pid: number
  stop(): Promise<void>
}

const SCRIPT = fileURLToPath(new URL('dynalite-server.mjs', import.meta.url))

export async function startDynaliteProcess(): Promise<DynaliteProcess> {
  const child = await startJsonLineChild<{ endpoint: string }>('dynalite', SCRIPT)
  return { endpoint: child.ready.endpoint, pid: child.pid, stop: () => child.stop() }
}
