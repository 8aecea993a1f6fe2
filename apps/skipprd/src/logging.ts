/**
 * Structured logs (pino, one JSON object per line). They always go to
 * `logs/skipprd.<YYYY-MM-DD>.log` under DATA_DIR (else the working directory), and to stderr when
 * `--log [LEVEL]` is given. Writes are synchronous: chaos mode logs a line and then SIGKILLs the
 * process, and that line must be on disk first. Every line passes through the redactor.
 */
import { mkdirSync, openSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { Logger as ConnectorLogger } from '@skippr/connector-api'
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
  mkdirSync(path.dirname(file), { recursive: true })
  const fileLevel = lower('info', options.stderrLevel)
  const streams: pino.StreamEntry[] = [
    { level: fileLevel, stream: redactingStream(openSync(file, 'a'), options.redactor) },
  ]
  if (options.stderrLevel)
    streams.push({ level: options.stderrLevel, stream: redactingStream(2, options.redactor) })
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

function redactingStream(fd: number, redactor: Redactor): { write(line: string): void } {
  return { write: (line) => void writeSync(fd, redactor.redact(line)) }
}

function lower(a: Level, b: Level | undefined): Level {
  if (!b) return a
  return LOG_LEVELS.indexOf(b) < LOG_LEVELS.indexOf(a) ? b : a
}
