/** A server run as a child process in its own process group and its own temp dir, for tests. */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

/** How to run a server whose config files are written into `dir`. */
export interface ServerSpec {
  readonly command: string
  readonly args: string[]
  /** Takes the process's stdout and stderr. */
  readonly outputFile: string
  /** Quoted, after `outputFile`, when the server fails to start. */
  readonly logFiles: string[]
  readonly readyTimeoutMs: number
  isReady(): Promise<boolean>
}

export interface RunningServer {
  /** Config, data and logs; removed by stop(). */
  readonly dir: string
  /** SIGTERM to the process group, SIGKILL after 10 s, then removes `dir`. */
  stop(): Promise<void>
}

interface ServerProcess {
  readonly pid: number
  /** Resolves once the process has exited, with its exit code or signal. */
  readonly exited: Promise<string>
}

const STOP_GRACE_MS = 10_000
const POLL_MS = 100

/** Pids of the servers' processes that have not exited yet. */
const running = new Set<number>()
// The servers run in their own group, so a test process that ends without stopping them (a failed
// hook, an uncaught error) would leave them running; a normal exit at least takes them and their
// dirs along.
const unstopped = new Set<() => void>()
process.on('exit', () => {
  for (const cleanUp of unstopped) cleanUp()
})

/**
 * Makes a temp dir, lets `prepare` write the server's config into it, starts the server and waits
 * until it is ready. Fails with the end of its logs if it exits first or is not ready in time; the
 * process and the dir are gone then.
 */
export async function startServer(
  name: string,
  prepare: (dir: string) => Promise<ServerSpec>,
): Promise<RunningServer> {
  const dir = await mkdtemp(join(tmpdir(), `skippr-${name.toLowerCase()}-`))
  let server: ServerProcess | undefined
  const cleanUpAtExit = () => {
    if (server && running.has(server.pid)) signalGroup(server.pid, 'SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  unstopped.add(cleanUpAtExit)
  const stop = async () => {
    if (server) await stopProcess(server)
    await rm(dir, { recursive: true, force: true })
    unstopped.delete(cleanUpAtExit)
  }
  try {
    const spec = await prepare(dir)
    server = await launch(spec)
    await waitUntilReady(name, server, spec)
  } catch (error) {
    await stop()
    throw error
  }
  return { dir, stop }
}

async function launch(spec: ServerSpec): Promise<ServerProcess> {
  const output = openSync(spec.outputFile, 'a')
  const child = spawn(spec.command, spec.args, { detached: true, stdio: ['ignore', output, output] })
  closeSync(output)
  await once(child, 'spawn')
  const pid = child.pid!
  running.add(pid)
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(pid)
      resolve(signal ?? `exit code ${code}`)
    })
  })
  return { pid, exited }
}

async function waitUntilReady(name: string, server: ServerProcess, spec: ServerSpec): Promise<void> {
  let exitedWith: string | undefined
  void server.exited.then((how) => {
    exitedWith = how
  })
  const deadline = Date.now() + spec.readyTimeoutMs
  while (!(await spec.isReady())) {
    const failure =
      exitedWith !== undefined
        ? `exited (${exitedWith}) before it was ready`
        : Date.now() > deadline
          ? `was not ready within ${spec.readyTimeoutMs / 1000} s`
          : undefined
    if (failure) {
      const logs = [spec.outputFile, ...spec.logFiles].map((file) => logTail(file))
      throw new Error(`${name} ${failure}.\n${logs.join('\n')}`)
    }
    await sleep(POLL_MS)
  }
}

async function stopProcess(server: ServerProcess): Promise<void> {
  if (!running.has(server.pid)) return
  signalGroup(server.pid, 'SIGTERM')
  const timedOut = await Promise.race([server.exited.then(() => false), sleep(STOP_GRACE_MS, true)])
  if (timedOut) signalGroup(server.pid, 'SIGKILL')
  await server.exited
}

function logTail(file: string, lines = 20): string {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return `--- ${file}: none`
  }
  return `--- last lines of ${file}:\n${text.trimEnd().split('\n').slice(-lines).join('\n')}`
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is gone already.
  }
}
