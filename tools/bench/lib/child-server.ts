/** A server the bench runs as a child process: when it accepts connections, and when it exits. */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'

/** Resolves once `port` on 127.0.0.1 accepts a TCP connection; fails if `child` exits first or after 30 s. */
export async function untilListening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before listening`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy()
        resolve(true)
      }).on('error', () => resolve(false))
      socket.setTimeout(1000, () => socket.destroy())
    })
    if (open) return
    await sleep(100)
  }
  throw new Error(`the server did not listen on ${port} within 30 s`)
}

/** The child's exit code, once it exits. */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}

/** A child that says it is ready with one JSON line on stdout, and stops when its stdin closes. */
export interface JsonLineChild<Ready> {
  readonly ready: Ready
  readonly pid: number
  stop(): Promise<void>
}

/**
 * Runs `node script ...args` and waits (30 s at most) for its first stdout line, parsed as JSON;
 * `what` names it if it exits or stays silent first.
 */
export async function startJsonLineChild<Ready>(
  what: string,
  script: string,
  args: readonly string[] = [],
): Promise<JsonLineChild<Ready>> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exit = once(child, 'exit')
  try {
    const lines = createInterface({ input: child.stdout })
    const ready = once(lines, 'line', { signal: AbortSignal.timeout(30_000) })
    const early = exit.then(([code]) => Promise.reject(new Error(`it exited ${code} before it listened`)))
    // Once it listens, its exit (at stop) is no error.
    early.catch(() => {})
    const [line] = (await Promise.race([ready, early])) as [string]
    lines.close()
    return {
      ready: JSON.parse(line) as Ready,
      pid: child.pid as number,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin.end()
          await exit
        }
      },
    }
  } catch (error) {
    child.kill()
    throw new Error(`${what} did not start: ${(error as Error).message}`)
  }
}
