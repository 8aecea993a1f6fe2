/**
 * The processes of a Websocket source's end-to-end test, each a real child process that can be
 * SIGKILLed and started again: a long-running `skipprd sync` of a Websocket pipeline, and
 * application processes sending with a `Sender` on a disk slot (websocket-app.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { CLI, cliEnv, exited } from './cli.js'

const APP = fileURLToPath(new URL('./websocket-app.ts', import.meta.url))
/**
 * The CLI to run; SKIPPR_WS_CLI names a copy of bin/cli.cjs (in a directory beside bin/) for a long
 * run by hand, which a rebuild of bin/ in the middle would break.
 */
const SKIPPRD = process.env.SKIPPR_WS_CLI ?? CLI

/** skippr.yml of the pipeline `events`: a Websocket source on `port` into `sink` (one data_sinks entry body). */
export function websocketConfig(port: number, sink: string, source = ''): string {
  return [
    'data_sources:',
    '  app:',
    `    Websocket: { listen: 127.0.0.1:${port}, namespace: events${source} }`,
    'data_sinks:',
    '  warehouse:',
    `    ${sink}`,
    'pipelines:',
    '  events:',
    '    data_source: data_sources.app',
    '    data_sink: data_sinks.warehouse',
    '',
  ].join('\n')
}

/** A child that is started, killed and started again; its stderr is kept across lives for the test's failure message. */
abstract class Restartable {
  protected child: ChildProcess | undefined
  kills = 0
  starts = 0
  private stderr = ''

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  protected track(child: ChildProcess): ChildProcess {
    this.child = child
    this.starts++
    child.stderr?.on('data', (chunk: Buffer) => {
      // The last 20 kB are enough to say why a run went wrong.
      this.stderr = (this.stderr + chunk.toString()).slice(-20_000)
    })
    return child
  }

  errors(): string {
    return this.stderr
  }

  async kill(): Promise<void> {
    const child = this.child
    if (!child || !this.running) return
    child.kill('SIGKILL')
    this.kills++
    await exited(child)
  }
}

export class SyncProcess extends Restartable {
  constructor(
    private readonly dir: string,
    private readonly port: number,
    private readonly env: Record<string, string> = {},
  ) {
    super()
  }

  /** Starts `skipprd sync --pipeline events`; resolves once it accepts connections on the source's port. */
  async start(): Promise<void> {
    const child = this.track(
      spawn(process.execPath, [SKIPPRD, 'sync', '--pipeline', 'events', '--output', 'json'], {
        cwd: this.dir,
        env: cliEnv(this.env),
        stdio: 'pipe',
      }),
    )
    child.stdout?.resume()
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`skipprd sync exited before listening: ${this.errors()}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  /** SIGTERM, as a scheduler stops it: it commits what it holds, lands for a grace period, exits. */
  async stop(): Promise<number | null> {
    const child = this.child
    if (!child || !this.running) return child?.exitCode ?? null
    child.kill('SIGTERM')
    return (await exited(child)).code
  }
}

export class AppProcess extends Restartable {
  private out = ''
  finished = false

  constructor(
    private readonly args: {
      port: number
      sfDir: string
      senderId: string
      total: number
      durable: boolean
      pauseMs: number
    },
  ) {
    super()
  }

  get senderId(): string {
    return this.args.senderId
  }

  start(): void {
    const { port, sfDir, senderId, total, durable, pauseMs } = this.args
    this.out = ''
    const child = this.track(
      spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          APP,
          `127.0.0.1:${port}`,
          sfDir,
          senderId,
          String(total),
          durable ? 'on' : 'off',
          String(pauseMs),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    )
    child.stdout?.on('data', (chunk: Buffer) => {
      this.out += chunk.toString()
      if (this.out.includes('done\n')) this.finished = true
    })
  }

  /** Resolves with the exit code once the application has exited (for a run expected to fail). */
  async exitCode(): Promise<number | null> {
    return (await exited(this.child!)).code
  }

  /** Resolves once the application printed `done` (every record acknowledged) and exited 0. */
  async done(): Promise<void> {
    const child = this.child!
    const { code } = await exited(child)
    if (code !== 0 || !this.finished)
      throw new Error(`application ${this.senderId} exited with ${code}: ${this.errors()}`)
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
