/** Runs a fixture of test/fixtures in a child Node.js process and waits for lines it prints. */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures')

export interface Child {
  readonly process: ChildProcess
  /** Every line printed so far. */
  lines(): string[]
  /** Resolves with the first printed line that `match` accepts; rejects if the child exits first. */
  printed(match: (line: string) => boolean): Promise<string>
  kill(): Promise<void>
}

export function runFixture(fixture: string, args: string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(fixtures, fixture), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  const waiters = new Set<() => void>()
  const wake = () => {
    for (const waiter of [...waiters]) waiter()
  }
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString()
    wake()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString()
  })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  exited.then(wake)
  const lines = () => out.split('\n').filter((line) => line !== '')
  return {
    process: child,
    lines,
    printed: (match) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const line = lines().find(match)
          if (line !== undefined) {
            waiters.delete(check)
            resolve(line)
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check)
            reject(new Error(`${fixture} exited: ${err}`))
          }
        }
        waiters.add(check)
        check()
      }),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

/** Starts the peer fixture on `port` (0: any) and waits until it listens; its port in `port`. */
export async function runPeer(dataDir: string, port = 0): Promise<{ child: Child; port: number }> {
  const child = runFixture('peer.ts', [dataDir, String(port)])
  const line = await child.printed((l) => l.startsWith('listening '))
  return { child, port: Number(line.split(' ')[1]) }
}
