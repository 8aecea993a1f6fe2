/**
 * What every command does around its own work: load the config (and its .env files), set up logs
 * and redaction, turn a failure into one `[skippr] <stage> failed: …` line on stderr and an exit
 * code, and stop cleanly on SIGINT/SIGTERM or a closed stdout.
 */
import { CONFIG_INVALID, hasCode } from '@skippr/connector-api'
import type { Level, Logger } from 'pino'
import type { Env } from '../config/interpolate.js'
import { type ConfigFile, loadConfigFile } from '../config/load.js'
import { logDirectory, type RuntimeFlags } from '../config/settings.js'
import {
  CONFIG_NOT_FOUND,
  CONNECTOR_MISSING,
  ENV_NOT_SET,
  PIPELINE_NOT_FOUND,
  WAL_STORAGE_INVALID,
  WAL_STORAGE_REFUSES_SINK,
  WAL_STORAGE_UNAVAILABLE,
} from '../errors.js'
import { createLogger } from '../logging.js'
import { Redactor } from '../redact.js'
import { closedByReader, STDOUT_CLOSED, StdoutClosedError, type StdoutWatch, watchStdout } from './stdout.js'

export const EXIT_OK = 0
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2

/** The global flags, as commander parses them. */
export interface GlobalOptions {
  readonly pipeline?: string
  readonly output: 'progress' | 'text' | 'json'
  readonly config?: string
  /** `--log` alone is `true` (info). */
  readonly log?: boolean | Level
  readonly walStorage?: string
  readonly walS3Bucket?: string
  readonly storeType?: string
  readonly storeName?: string
  readonly createStore?: boolean
  readonly metricsAddr?: string
  /** The vendor's workspace flags: only `connect` uses them (connect/entry.ts `WORKSPACE_FLAGS`). */
  readonly workspace?: string
  readonly tenant?: string
  readonly storageMode?: string
  readonly skipprS3Bucket?: string
}

/** Failures the operator fixes in skippr.yml, .env or the environment. */
const CONFIG_CODES = new Set([
  CONFIG_INVALID,
  CONFIG_NOT_FOUND,
  ENV_NOT_SET,
  CONNECTOR_MISSING,
  PIPELINE_NOT_FOUND,
  WAL_STORAGE_INVALID,
  WAL_STORAGE_REFUSES_SINK,
  WAL_STORAGE_UNAVAILABLE,
  // By value: importing @skippr/state or @skippr/wal here would load them for every command.
  'SKIPPR_UNKNOWN_STORE_TYPE',
  'WAL_CONFIG_INVALID',
])

export interface CommandContext {
  readonly file: ConfigFile
  readonly cwd: string
  readonly flags: RuntimeFlags
  readonly logger: Logger
  readonly redactor: Redactor
  /**
   * Writes redacted text to stdout / stderr. Once stdout is closed, `out` throws STDOUT_CLOSED in a
   * command that ends when it does, and writes nothing in one that stops.
   */
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  /** Aborted by SIGINT/SIGTERM, with the signal's name as reason, or by a closed stdout (`stop`). */
  readonly stop: AbortSignal
  readonly stdout: StdoutWatch
}

/**
 * What a closed stdout (`skipprd … | head`) does to a command: `end` one whose output is what it is
 * for (its next write throws, and EPIPE ends it with exit 0), or `stop` it as SIGINT/SIGTERM would.
 */
type WhenStdoutCloses = 'end' | 'stop'

/** The stop's reason when stdout closed, as the run reports it ("stopped by …"). */
const CLOSED_STDOUT = 'a closed stdout'

/**
 * Runs `work` with a loaded config and logs; maps errors to the stderr line and exit code.
 * `stage` names what failed in that line: `[skippr] sync failed: …`.
 */
export async function runCommand(
  stage: string,
  options: GlobalOptions,
  work: (context: CommandContext) => Promise<number>,
  whenStdoutCloses: WhenStdoutCloses = 'end',
): Promise<number> {
  const cwd = process.cwd()
  const redactor = new Redactor()
  const stopping = new AbortController()
  let logger: Logger | undefined
  const stdout = watchStdout(process.stdout, (error) => {
    logger?.info(
      { err: error },
      `stdout is closed: ${stage} ${whenStdoutCloses === 'end' ? 'ends' : 'stops'}`,
    )
    if (whenStdoutCloses === 'stop') stopping.abort(CLOSED_STDOUT)
  })
  const out = (text: string): void => {
    if (stdout.error === undefined) process.stdout.write(redactor.redact(text))
    else if (whenStdoutCloses === 'end') throw new StdoutClosedError(stdout.error)
  }
  const err = (text: string): void => void process.stderr.write(redactor.redact(text))
  const stderrLevel = options.log === true ? 'info' : options.log || undefined
  const logsFor = (env: Env): Logger => createLogger({ dir: logDirectory(env, cwd), stderrLevel, redactor })
  let signals = 0
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signals++ > 0) process.exit(128 + (signal === 'SIGINT' ? 2 : 15))
    logger?.info({ signal }, 'stopping: finishing the current step (send the signal again to quit at once)')
    stopping.abort(signal)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    const file = loadConfigFile({ config: options.config, cwd, env: process.env })
    logger = logsFor(file.env)
    // What the config loader set aside: vendor sections it ignores, config files it did not read.
    for (const notice of file.notices ?? []) logger.info(notice)
    const flags: RuntimeFlags = {
      walStorage: options.walStorage,
      walS3Bucket: options.walS3Bucket,
      storeType: options.storeType,
      storeName: options.storeName,
      createStore: options.createStore,
    }
    return await work({ file, cwd, flags, logger, redactor, out, err, stop: stopping.signal, stdout })
  } catch (error) {
    // The reader had what it wanted (`| head`): no failure.
    if (hasCode(error, STDOUT_CLOSED) && closedByReader((error as StdoutClosedError).cause)) return EXIT_OK
    logger ??= safeLogger(() => logsFor(process.env))
    logger?.error({ err: error }, `${stage} failed`)
    if (!isReported(error)) err(`${failureLine(stage, error)}\n`)
    return EXIT_FAILURE
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

/** Errors a command already printed (a run's `sync_error`), so they are not printed twice. */
const reported = new WeakSet<object>()

export function markReported(error: unknown): void {
  if (typeof error === 'object' && error !== null) reported.add(error)
}

export function isReported(error: unknown): boolean {
  return typeof error === 'object' && error !== null && reported.has(error)
}

export function failureLine(stage: string, error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  const what = typeof code === 'string' && CONFIG_CODES.has(code) ? 'config' : stage
  const message = error instanceof Error ? error.message : String(error)
  return `[skippr] ${what} failed: ${message}`
}

function safeLogger(make: () => Logger): Logger | undefined {
  try {
    return make()
  } catch {
    // No writable log directory: the stderr line is all the operator gets.
    return undefined
  }
}
