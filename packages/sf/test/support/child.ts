/** Runs a TypeScript fixture in a child Node.js process and waits for lines it prints. */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))

export interface Child {
  process: ChildProcess
  /** Resolves when the child printed `line` (now or earlier); rejects if it exits first. */
  printed(line: string): Promise<void>
  exited: Promise<number | null>
  kill(): Promise<void>
  stderr(): string
}

export function runFixture(fixture: string, args: string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, fixture), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  const waiters: Array<() => void> = []
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString()
    for (const w of waiters.splice(0)) w()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return {
    process: child,
    printed(line) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (out.split('\n').includes(line)) resolve()
          else if (child.exitCode !== null || child.signalCode !== null)
            reject(new Error(`${fixture} exited before printing ${line}: ${err}`))
          else waiters.push(check)
        }
        exited.then(() => check())
        check()
      })
    },
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
    stderr: () => err,
  }
}
