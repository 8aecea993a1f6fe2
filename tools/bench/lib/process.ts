/**
 * A child process timed from spawn to exit, with its peak resident set size: `/usr/bin/time`'s
 * max RSS (exact, from wait4) where it exists, else the highest VmHWM read from /proc while it ran;
 * and its CPU time (user + system, from wait4 through `/usr/bin/time`; unknown without it).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { open, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

export interface Measured {
  readonly ms: number
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** Peak RSS in bytes; undefined if it could not be measured. */
  readonly peakRss: number | undefined
  /** User + system CPU time in ms, to 10 ms; undefined if it could not be measured. */
  readonly cpuMs: number | undefined
}

const TIME = '/usr/bin/time'
const POLL_MS = 20

export interface MeasureOptions {
  readonly cwd?: string
  readonly env?: NodeJS.ProcessEnv
  /** A file the command reads as its standard input, as `command < file` would. */
  readonly stdin?: string
  /** A file the command writes its standard output to, as `command > file` would; `stdout` is then empty. */
  readonly stdout?: string
}

export async function measure(
  command: string,
  args: readonly string[],
  { stdin, stdout: output, ...options }: MeasureOptions = {},
): Promise<Measured> {
  const rssFile = path.join(os.tmpdir(), `skippr-bench-rss-${process.pid}-${Date.now()}`)
  const timed = existsSync(TIME)
  const [file, argv] = timed ? [TIME, ['-f', '%M %U %S', '-o', rssFile, command, ...args]] : [command, args]
  const input = stdin === undefined ? undefined : await open(stdin)
  const outputFile = output === undefined ? undefined : await open(output, 'w')
  const started = performance.now()
  const child = spawn(file, argv, {
    ...options,
    stdio: [input?.fd ?? 'ignore', outputFile?.fd ?? 'pipe', 'pipe'],
  })
  // The child holds its own copies of the descriptors from here on.
  const closed = Promise.all([input?.close(), outputFile?.close()])
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    stdout += text
  })
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text
  })
  let polledKb = 0
  const poll = timed
    ? undefined
    : setInterval(() => {
        readFile(`/proc/${child.pid}/status`, 'utf8')
          .then((status) => {
            polledKb = Math.max(polledKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0))
          })
          .catch(() => {})
      }, POLL_MS)
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (exitCode) => resolve(exitCode))
  })
  const ms = performance.now() - started
  clearInterval(poll)
  await closed
  let peakKb = polledKb
  let cpuMs: number | undefined
  if (timed) {
    // The last line: before it, `time` may have written "Command exited with non-zero status …".
    const last = (await readFile(rssFile, 'utf8').catch(() => '')).trim().split('\n').pop() ?? ''
    const [maxKb, user, system] = last.split(' ').map(Number)
    peakKb = maxKb ?? 0
    cpuMs = user !== undefined && system !== undefined ? (user + system) * 1000 : undefined
    await rm(rssFile, { force: true })
  }
  return {
    ms,
    code,
    stdout,
    stderr,
    peakRss: peakKb > 0 ? peakKb * 1024 : undefined,
    cpuMs: cpuMs !== undefined && Number.isFinite(cpuMs) ? cpuMs : undefined,
  }
}

/** Throws with the command's output unless it exited 0. */
export function ensureOk(what: string, run: Measured): Measured {
  if (run.code !== 0) throw new Error(`${what} exited ${run.code}:\n${run.stdout}${run.stderr}`)
  return run
}
