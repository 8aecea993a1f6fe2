import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger, SourceChunk, SourceOffset } from '@skippr/connector-api'
import { afterEach } from 'vitest'
import type { FileConfig } from '../src/config.js'
import { FileSource } from '../src/source.js'

const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A fresh directory, removed after the test: the config directory of the sources made in it. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skippr-file-'))
  dirs.push(dir)
  return dir
}

export interface LogLine {
  readonly level: string
  readonly message: string
  readonly fields?: Record<string, unknown>
}

export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = []
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push({ level, message, ...(fields ? { fields } : {}) })
  }
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

export function fileSource(
  dir: string,
  config: FileConfig,
  options: { logger?: Logger; pollMs?: number } = {},
) {
  const logger = options.logger ?? recordingLogger()
  return new FileSource(
    config,
    { configDir: dir, dataDir: dir, pipeline: 'test', logger },
    options.pollMs ?? 20,
  )
}

/** Reads until the source ends, or stops after `stopAfter` chunks as a killed run would. */
export async function readChunks(
  source: FileSource,
  from?: SourceOffset,
  options: { stopAfter?: number; follow?: boolean; signal?: AbortSignal } = {},
): Promise<SourceChunk[]> {
  const chunks: SourceChunk[] = []
  const signal = options.signal ?? new AbortController().signal
  for await (const chunk of source.read(from, { signal, follow: options.follow ?? false })) {
    chunks.push(chunk)
    if (chunks.length === options.stopAfter) break
  }
  return chunks
}

const decoder = new TextDecoder()
export const text = (chunks: readonly SourceChunk[]) => chunks.map((c) => decoder.decode(c.body)).join('')
export const rows = (chunks: readonly SourceChunk[]) => chunks.reduce((sum, c) => sum + c.rows, 0)
/** The records the chunks set aside, in order. */
export const refused = (chunks: readonly SourceChunk[]) => chunks.flatMap((c) => c.refused ?? [])
export const lastOffset = (chunks: readonly SourceChunk[], before?: SourceOffset) =>
  chunks.at(-1)?.offset ?? before

/**
 * A run cut short where the source starts waiting for a file's last record to stop changing, as
 * if its writer were still at work: each `signal()` arms a new run. The logger records too.
 */
export function writerAtWork(): { logger: ReturnType<typeof recordingLogger>; signal(): AbortSignal } {
  const logger = recordingLogger()
  let run = new AbortController()
  const debug = logger.debug
  logger.debug = (message, fields) => {
    debug(message, fields)
    if (message.startsWith('the last record has no newline')) run.abort()
  }
  return {
    logger,
    signal: () => {
      run = new AbortController()
      return run.signal
    },
  }
}
