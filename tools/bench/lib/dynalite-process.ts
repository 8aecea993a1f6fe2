/** dynalite in a child process of its own (lib/dynalite-server.mjs), with its pid for lib/server-cpu.ts. */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface DynaliteProcess {
  /** `http://127.0.0.1:<port>`; dynalite takes any region and credentials. */
  readonly endpoint: string
  readonly pid: number
  stop(): Promise<void>
}

const SCRIPT = fileURLToPath(new URL('dynalite-server.mjs', import.meta.url))
const READY_MS = 30_000

export async function startDynaliteProcess(): Promise<DynaliteProcess> {
  const child = spawn(process.execPath, [SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = once(child, 'exit')
  try {
    const lines = createInterface({ input: child.stdout })
    const ready = once(lines, 'line', { signal: AbortSignal.timeout(READY_MS) })
    const early = exited.then(([code]) => Promise.reject(new Error(`it exited ${code} before it listened`)))
    // Once it listens, its exit (at stop) is no error.
    early.catch(() => {})
    const [line] = (await Promise.race([ready, early])) as [string]
    lines.close()
    const { endpoint } = JSON.parse(line) as { endpoint: string }
    return {
      endpoint,
      pid: child.pid as number,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin.end()
          await exited
        }
      },
    }
  } catch (error) {
    child.kill()
    throw new Error(`dynalite did not start: ${(error as Error).message}`)
  }
}
