/**
 * Reading: the source, from the WAL's resume offset, into the batch buffer, whose commits make each
 * batch durable before the source position may move on. Refused records go beside their chunk as
 * deadletter rows, in the same batch.
 */
import { hasCode, type Source } from '@skippr/connector-api'
import type { BatchBuffer, Wal, WalDiskFullError } from '@skippr/wal'
import { SourceFailedError } from '../errors.js'
import type { Chaos } from './chaos.js'
import { deadletterChunk } from './deadletters.js'
import type { RunProgress } from './events.js'
import type { SchemaRegistry } from './schemas.js'

export interface IngestOptions {
  readonly source: Source
  readonly wal: Wal
  readonly buffer: BatchBuffer
  readonly schemas: SchemaRegistry
  readonly progress: RunProgress
  readonly chaos: Chaos
  readonly pipeline: string
  readonly follow: boolean
  readonly signal: AbortSignal
}

/**
 * Reads the source into the WAL until it ends (following: until the run stops) and commits the rest.
 * A full disk ends reading but not the run: it resolves with that error, so that what was committed
 * still lands. A commit that waited at the cap until the run stopped is no failure of its own (the
 * run reports why it stopped); either way the resume position stays at the last committed batch.
 */
export async function readIntoWal(options: IngestOptions): Promise<WalDiskFullError | undefined> {
  const { buffer, signal } = options
  try {
    await ingest(options)
    if (options.follow && !signal.aborted) {
      // A finite source ended while following: commit what it gave, keep landing, idle until stopped.
      await buffer.flush()
      await aborted(signal)
    }
    await buffer.close()
    return undefined
  } catch (error) {
    if (hasCode(error, 'WAL_DISK_FULL')) return error as WalDiskFullError
    if (signal.aborted && error === signal.reason) return undefined
    throw error
  }
}

/** Reads the source from the WAL's resume offset into the buffer until it ends or `signal` aborts. */
async function ingest(options: IngestOptions): Promise<void> {
  const { source, buffer, schemas, progress, chaos, signal } = options
  const from = await options.wal.resumeOffset()
  const chunks = source.read(from, { signal, follow: options.follow })[Symbol.asyncIterator]()
  try {
    while (!signal.aborted) {
      const next = await chunks.next().catch((error: unknown) => {
        // A source may end its read with an abort error when asked to stop: that is a clean end.
        if (signal.aborted) return { done: true as const, value: undefined }
        throw new SourceFailedError(options.pipeline, error)
      })
      if (next.done) return
      const chunk = next.value
      const { version: schemaVersion, body } = await schemas.observe(chunk)
      progress.read(chunk.namespace, chunk.rows, chunk.body.length)
      const data = { ...chunk, body, schemaVersion }
      const refused = chunk.refused ?? []
      await buffer.add(
        refused.length === 0
          ? data
          : [data, deadletterChunk(options.pipeline, refused, chunk.offset, new Date())],
      )
      chaos.at('mid-read', `${chunk.namespace} +${chunk.rows} rows`)
    }
  } finally {
    await chunks.return?.()
  }
}

/** Resolves when `signal` aborts, keeping the process alive until then (an idle sync has no other handle). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const keepAlive = setInterval(() => {}, 60_000)
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(keepAlive)
        resolve()
      },
      { once: true },
    )
  })
}
