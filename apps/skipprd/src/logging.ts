/**
 * Structured logs (pino, one JSON object per line). They always go to
 * `logs/skipprd.<YYYY-MM-DD>.log` under DATA_DIR (else the working directory), and to stderr when
 * `--log [LEVEL]` is given. Writes are synchronous: chaos mode logs a line and then SIGKILLs the
 * process, and that line must be on disk first. Every line passes through the redactor. A log that
 * cannot be written (a full disk, a closed pipe) stops with one line on stderr, never the run.
 */
import { openSync, writeSync } from 'node:fs'
import path from 'node:path'
import { type Logger as ConnectorLogger, makeDirectorySync } from '@skippr/connector-api'
import pino, { type Level, type Logger } from 'pino'
import type { Redactor } from './redact.js'

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const

export interface LogOptions {
  /** Directory that holds `logs/`. */
  readonly dir: string
  /** Level for stderr; undefined keeps stderr free of logs. */
  readonly stderrLevel?: Level | undefined
  readonly redactor: Redactor
  /** Defaults to today. */
  readonly now?: Date
}

export function logFilePath(dir: string, now = new Date()): string {
  const day = [now.getFullYear(), now.getMonth() + 1, now.getDate()].map((n) => String(n).padStart(2, '0'))
  return path.join(dir, 'logs', `skipprd.${day.join('-')}.log`)
}

export function createLogger(options: LogOptions): Logger {
  const file = logFilePath(options.dir, options.now)
  const fileLevel = lower('info', options.stderrLevel)
  const streams: pino.StreamEntry[] = []
  const fileStopped = (error: unknown) =>
    say(
      `skipprd: cannot write the log file ${file} (${describe(error)}): logging to it stops; free space or fix permissions in ${path.dirname(file)}`,
    )
  const fd = openLog(file, fileStopped)
  if (fd !== undefined)
    streams.push({ level: fileLevel, stream: redactingStream(fd, options.redactor, fileStopped) })
  // A closed stderr (EPIPE) has no one left to tell.
  if (options.stderrLevel)
    streams.push({ level: options.stderrLevel, stream: redactingStream(2, options.redactor, () => {}) })
  return pino(
    { level: fileLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.multistream(streams),
  )
}

/** A logger that writes nothing (programmatic use without logs). */
export function silentPino(): Logger {
  return pino({ level: 'silent' })
}

/** The `Logger` connectors receive, backed by the run's structured logger. */
export function connectorLogger(logger: Logger): ConnectorLogger {
  return {
    debug: (message, fields) => logger.debug(fields ?? {}, message),
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
  }
}

/**
 * Writes each line whole, or stops for good at the first failure (a full disk, a closed pipe),
 * telling `stopped` once: a log that cannot be written never ends the run it describes.
 */
function redactingStream(
  fd: number,
  redactor: Redactor,
  stopped: (error: unknown) => void,
): { write(line: string): void } {
  let failed = false
  return {
    write(line) {
      if (failed) return
      try {
        writeSync(fd, redactor.redact(line))
      } catch (error) {
        failed = true
        stopped(error)
      }
    },
  }
}

/** The log file opened for appending, or undefined (told to `failed`) when it cannot be. */
function openLog(file: string, failed: (error: unknown) => void): number | undefined {
  try {
    makeDirectorySync(path.dirname(file))
    return openSync(file, 'a')
  } catch (error) {
    failed(error)
    return undefined
  }
}

/** One line on stderr, if stderr takes it. */
function say(line: string): void {
  try {
    writeSync(2, `${line}\n`)
  } catch {}
}

function describe(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException
  return code ?? message ?? String(error)
}

function lower(a: Level, b: Level | undefined): Level {
  if (!b) return a
  return LOG_LEVELS.indexOf(b) < LOG_LEVELS.indexOf(a) ? b : a
}
