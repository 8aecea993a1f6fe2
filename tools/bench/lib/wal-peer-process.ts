/** A clustered-WAL peer in a child process of its own (lib/wal-peer-server.mjs), with its pid for lib/server-cpu.ts. */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface WalPeerProcess {
  /** `ws://127.0.0.1:<port>`, what a leader's `peers` lists. */
  readonly url: string
  readonly pid: number
  /** Where its copies live. */
  readonly dataDir: string
  stop(): Promise<void>
}

const SCRIPT = fileURLToPath(new URL('wal-peer-server.mjs', import.meta.url))
const READY_MS = 30_000

export async function startWalPeerProcess(dataDir: string, secret: string): Promise<WalPeerProcess> {
  const child = spawn(process.execPath, [SCRIPT, dataDir, secret], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = once(child, 'exit')
  try {
    const lines = createInterface({ input: child.stdout })
    const ready = once(lines, 'line', { signal: AbortSignal.timeout(READY_MS) })
    const early = exited.then(([code]) => Promise.reject(new Error(`it exited ${code} before it listened`)))
    // Once it listens, its exit (at stop) is no error.
    early.catch(() => {})
    const [line] = (await Promise.race([ready, early])) as [string]
    lines.close()
    const { url } = JSON.parse(line) as { url: string }
    return {
      url,
      pid: child.pid as number,
      dataDir,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin.end()
          await exited
        }
      },
    }
  } catch (error) {
    child.kill()
    throw new Error(`the WAL peer did not start: ${(error as Error).message}`)
  }
}
