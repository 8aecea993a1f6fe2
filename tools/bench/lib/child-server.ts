/** A server the bench runs as a child process: when it accepts connections, and when it exits. */
import type { ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
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
