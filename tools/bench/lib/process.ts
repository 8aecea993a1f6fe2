/**
 * A child process timed from spawn to exit, with its peak resident set size: `/usr/bin/time`'s
 * max RSS (exact, from wait4) where it exists, else the highest VmHWM read from /proc while it ran.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

export interface Measured {
  readonly ms: number
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** Peak RSS in bytes; undefined if it could not be measured. */
  readonly peakRss: number | undefined
}

const TIME = '/usr/bin/time'
const POLL_MS = 20

export async function measure(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Measured> {
  const rssFile = path.join(os.tmpdir(), `skippr-bench-rss-${process.pid}-${Date.now()}`)
  const timed = existsSync(TIME)
  const [file, argv] = timed ? [TIME, ['-f', '%M', '-o', rssFile, command, ...args]] : [command, args]
  const started = performance.now()
  const child = spawn(file, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text
  })
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
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
  let peakKb = polledKb
  if (timed) {
    peakKb = Number((await readFile(rssFile, 'utf8').catch(() => '')).trim().split('\n').pop())
    await rm(rssFile, { force: true })
  }
  return { ms, code, stdout, stderr, peakRss: peakKb > 0 ? peakKb * 1024 : undefined }
}

/** Throws with the command's output unless it exited 0. */
export function ensureOk(what: string, run: Measured): Measured {
  if (run.code !== 0) throw new Error(`${what} exited ${run.code}:\n${run.stdout}${run.stderr}`)
  return run
}
