import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterEach } from 'vitest'

const FIXTURE = fileURLToPath(new URL('./fixtures/child.ts', import.meta.url))

const dirs: string[] = []

/** A fresh data dir, removed after the test. */
export async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'skippr-state-'))
  dirs.push(dir)
  return dir
}

const children: Child[] = []

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

export type Report = Record<string, unknown> & { readonly event: string }

/** A real child process running `fixtures/child.ts`, reporting JSON lines. */
export class Child {
  readonly process: ChildProcessWithoutNullStreams
  readonly exited: Promise<void>
  private readonly reports: Report[] = []
  private wake: (() => void) | undefined
  private stderr = ''

  constructor(args: string[]) {
    this.process = spawn(process.execPath, ['--import', 'tsx', FIXTURE, ...args], { stdio: 'pipe' })
    children.push(this)
    createInterface({ input: this.process.stdout }).on('line', (line) => {
      this.reports.push(JSON.parse(line) as Report)
      this.wake?.()
    })
    this.process.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString()
    })
    this.exited = new Promise((resolve) =>
      this.process.on('exit', () => {
        resolve()
        this.wake?.()
      }),
    )
  }

  /** The next report of the given event, skipping others; fails if the child dies first. */
  async next(event: string, timeoutMs = 15_000): Promise<Report> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const index = this.reports.findIndex((r) => r.event === event)
      if (index >= 0) return this.reports.splice(0, index + 1).at(-1)!
      if (this.process.exitCode !== null || this.process.signalCode !== null || Date.now() > deadline) {
        throw new Error(`child ended or timed out before '${event}': ${this.stderr}`)
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve
        setTimeout(resolve, 50)
      })
    }
  }

  /** Every report received so far, consumed. */
  drain(): Report[] {
    return this.reports.splice(0)
  }

  send(line: string): void {
    this.process.stdin.write(`${line}\n`)
  }

  /** Sends a command to a holder and returns its reply. */
  async command(line: string): Promise<Report> {
    this.send(line)
    return this.next('reply')
  }

  kill(signal: NodeJS.Signals): void {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal)
  }
}
