/** Runs the built CLI as a user would: `node bin/cli.cjs …` in a working directory of the test's choosing. */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const CLI = fileURLToPath(new URL('../../bin/cli.cjs', import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface CliOptions {
  readonly cwd: string
  readonly env?: Record<string, string | undefined>
  readonly timeoutMs?: number
}

/** The environment a test's CLI runs in: the process's, less anything that would change the run. */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env))
    if (key.startsWith('SKIPPR_') || key.startsWith('WAL_') || key.startsWith('BUFFER_THRESHOLD_'))
      delete env[key]
  for (const key of ['DATA_DIR', 'PIPELINE_NAME', 'FORCE_COLOR']) delete env[key]
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) env[key] = value
  return env
}

export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: options.cwd,
        env: cliEnv(options.env),
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null
        resolve({
          code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0,
          signal: failure?.signal ?? null,
          stdout,
          stderr,
        })
      },
    )
  })
}

export function spawnCli(args: readonly string[], options: CliOptions): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: cliEnv(options.env),
    stdio: 'pipe',
  })
}

/** Resolves with the exit code and signal once the child has exited. */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode })
    else child.once('exit', (code, signal) => resolve({ code, signal }))
  })
}
