/**
 * The in-memory buffer between a source and the WAL: chunks accumulate until BUFFER_THRESHOLD_BYTES of
 * bodies or BUFFER_THRESHOLD_SECONDS since the first chunk, then flush as one batch whose offset is the
 * last chunk's. Chunks of one namespace, format and schema version join into one part, in arrival order.
 *
 * Flushes commit one at a time, in order, and one commit may run while the next batch fills: `add`
 * waits only when a flush is due and the one before it is still being committed, so reading and encoding
 * overlap the WAL's disk writes with at most two batches in memory. (The source may read ahead of the
 * WAL; what it must not do is persist a position, and only the WAL does that.) A failed commit breaks the
 * buffer for good: committing later chunks would move the resume position past rows that never reached
 * the WAL, so every later call rethrows the failure and the runner restarts from the WAL's resume offset.
 */
import { WalBatchInvalidError } from './errors.js'
import type { BatchInput, Offset, PartInput, RecordFormat } from './types.js'

/** A run of rows of one namespace and the source position reached after them (a source's chunk). */
export interface BufferChunk {
  readonly namespace: string
  readonly format: RecordFormat
  readonly schemaVersion: number
  readonly rows: number
  /** Whole newline-terminated rows. */
  readonly body: Uint8Array
  readonly offset: Offset | undefined
}

export interface BatchBufferOptions {
  readonly thresholdBytes: number
  readonly thresholdSeconds: number
  /** Stores one batch durably; normally `(batch) => wal.commit(batch)`. */
  readonly commit: (batch: BatchInput) => Promise<unknown>
}

interface OpenPart {
  readonly namespace: string
  readonly format: RecordFormat
  readonly schemaVersion: number
  rows: number
  readonly bodies: Uint8Array[]
}

const NEWLINE = 0x0a

export class BatchBuffer {
  private parts = new Map<string, OpenPart>()
  private offset: Offset | undefined
  private chunks = 0
  private bodyBytes = 0
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()
  private failure: { error: unknown } | undefined
  private closed = false

  constructor(private readonly options: BatchBufferOptions) {}

  /** Body bytes waiting for the next flush. */
  get bytes(): number {
    return this.bodyBytes
  }

  /**
   * Adds a chunk, or chunks that reached one source position and so must share a batch (a chunk's
   * rows and the records set aside beside them). At the byte threshold it starts committing the
   * batch and resolves once the commit before that one is done (flush() waits for all of them).
   */
  async add(chunks: BufferChunk | readonly BufferChunk[]): Promise<void> {
    this.throwIfUnusable()
    for (const chunk of Array.isArray(chunks) ? chunks : [chunks]) {
      checkChunk(chunk)
      const part = this.partFor(chunk)
      if (chunk.body.length > 0) part.bodies.push(chunk.body)
      part.rows += chunk.rows
      this.offset = chunk.offset
      this.bodyBytes += chunk.body.length
      if (this.chunks++ === 0) this.startTimer()
    }
    if (this.bodyBytes >= this.options.thresholdBytes) {
      const previous = this.flushing
      void this.flushQueued()
      await previous
      this.throwIfUnusable()
    }
  }

  /** Commits whatever is buffered (nothing when empty) and waits for every earlier flush. */
  async flush(): Promise<void> {
    this.throwIfUnusable()
    await this.flushQueued()
    this.throwIfUnusable()
  }

  /** Flushes the rest and stops the timer. */
  async close(): Promise<void> {
    await this.flush()
    this.closed = true
  }

  private flushQueued(): Promise<void> {
    const batch = this.take()
    if (batch !== undefined) {
      this.flushing = this.flushing.then(async () => {
        if (this.failure !== undefined) return
        try {
          await this.options.commit(batch)
        } catch (error) {
          this.failure = { error }
        }
      })
    }
    return this.flushing
  }

  /** Empties the buffer into one batch. */
  private take(): BatchInput | undefined {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.chunks === 0) return undefined
    const parts: PartInput[] = []
    for (const p of this.parts.values()) {
      if (p.bodies.length === 0 && p.rows === 0) continue
      // The chunks as pieces: the WAL copies them into its frame once, with no joined copy first.
      const { namespace, format, schemaVersion, rows, bodies } = p
      parts.push({ namespace, format, schemaVersion, rows, body: bodies })
    }
    const batch = { offset: this.offset, parts }
    this.parts = new Map()
    this.chunks = 0
    this.bodyBytes = 0
    return batch
  }

  private partFor(chunk: BufferChunk): OpenPart {
    const key = `${chunk.namespace}\u0000${chunk.format}\u0000${chunk.schemaVersion}`
    let part = this.parts.get(key)
    if (part === undefined) {
      const { namespace, format, schemaVersion } = chunk
      part = { namespace, format, schemaVersion, rows: 0, bodies: [] }
      this.parts.set(key, part)
    }
    return part
  }

  private startTimer(): void {
    // A timer flush reports its failure through the next add/flush/close call.
    this.timer = setTimeout(() => void this.flushQueued(), this.options.thresholdSeconds * 1000)
    this.timer.unref()
  }

  private throwIfUnusable(): void {
    if (this.failure !== undefined) throw this.failure.error
    if (this.closed) throw new WalBatchInvalidError('the buffer is closed')
  }
}

function checkChunk(chunk: BufferChunk): void {
  const { body } = chunk
  if (body.length > 0 && body[body.length - 1] !== NEWLINE) {
    throw new WalBatchInvalidError(
      `a chunk of '${chunk.namespace}' does not end with a newline; ${chunk.format} bodies must hold whole rows`,
    )
  }
}
