/**
 * One `skipprd sync --once` as a real child process of the BUILT CLI, and what became of it: it
 * completed, chaos mode SIGKILLed it (at which point), or it failed some other way.
 */
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { SkipprdNotBuiltError } from './errors.js'

export type RunOutcome =
  | { readonly kind: 'completed'; readonly ms: number; readonly rowsWritten: number | undefined }
  | { readonly kind: 'killed'; readonly ms: number; readonly point: string; readonly detail: string }
  | { readonly kind: 'failed'; readonly ms: number; readonly reason: string }

export interface SyncRun {
  readonly cliPath: string
  readonly configPath: string
  readonly pipeline: string
  readonly env: NodeJS.ProcessEnv
  /** The run's stdout and stderr are appended here. */
  readonly logFile: string
  /** A run still going after this long is SIGKILLed and reported as hung. */
  readonly timeoutMs: number
}

/** The line chaos.ts writes to stderr just before the SIGKILL. */
const CHAOS_LINE = /chaos mode: killing the process with SIGKILL at (\S+) \((.*)\)/

/** The `skipprd` bin of the workspace's built app. */
export function skipprdCli(): string {
  const manifest = createRequire(import.meta.url).resolve('skipprd/package.json')
  const bin = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { skipprd: string } }).bin.skipprd
  const cli = path.resolve(path.dirname(manifest), bin)
  if (!existsSync(cli)) throw new SkipprdNotBuiltError(cli)
  return cli
}

export function runSync(run: SyncRun): Promise<RunOutcome> {
  const started = performance.now()
  const args = [run.cliPath, 'sync', '--pipeline', run.pipeline, '--once', '--output', 'json']
  args.push('--config', run.configPath)
  const child = spawn(process.execPath, args, {
    cwd: path.dirname(run.configPath),
    env: run.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text
  })
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text
  })
  let hung = false
  const timer = setTimeout(() => {
    hung = true
    child.kill('SIGKILL')
  }, run.timeoutMs)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const ms = performance.now() - started
      appendFileSync(run.logFile, `--- exit ${code ?? signal} after ${Math.round(ms)} ms\n${stdout}${stderr}`)
      const chaos = CHAOS_LINE.exec(stderr)
      if (hung) resolve({ kind: 'failed', ms, reason: `still running after ${run.timeoutMs} ms (hung?)` })
      else if (code === 0) resolve({ kind: 'completed', ms, rowsWritten: rowsWritten(stdout) })
      else if (signal === 'SIGKILL' && chaos)
        resolve({ kind: 'killed', ms, point: chaos[1] ?? '', detail: chaos[2] ?? '' })
      else resolve({ kind: 'failed', ms, reason: `exit ${code ?? signal}: ${lastLines(stderr)}` })
    })
  })
}

/** `total_rows` of the `sync_complete` event. */
function rowsWritten(stdout: string): number | undefined {
  for (const line of stdout.split('\n')) {
    if (!line.includes('"sync_complete"')) continue
    const event = JSON.parse(line) as { total_rows?: number }
    return event.total_rows
  }
  return undefined
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ') || '(no output)'
}
