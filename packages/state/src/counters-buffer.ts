/**
 * The counters as a sync writes them: counted in memory as batches commit and land, and written
 * together at most every `intervalMs` and when the buffer closes — one state write for many
 * batches instead of two per batch (a sync's state writes per landed batch are then its resume
 * position and, with the S3 WAL, its ack). The counters keep their promise: a process killed
 * before a write leaves the batches since the last one uncounted, so the counters may lag (by
 * at most `intervalMs` of batches while it runs), never run ahead.
 */
import {
  type CountedBatch,
  type CountedEntry,
  type CountedPart,
  type PipelineCounters,
  partCounts,
} from './pipeline-counters.js'

export interface CountersBufferOptions {
  /** The longest counted batches wait for their write. */
  readonly intervalMs: number
  /** A failed write is tried again at the next interval; this hears of each failure. */
  readonly onError: (error: unknown) => void
}

export class CountersBuffer {
  private entries: CountedEntry[] = []
  private timer: NodeJS.Timeout | undefined
  private writing: Promise<void> = Promise.resolve()

  constructor(
    private readonly counters: PipelineCounters,
    private readonly options: CountersBufferOptions,
  ) {}

  /** Counts a committed batch; written within `intervalMs`. */
  recordCommitted(id: CountedBatch, parts: readonly CountedPart[]): Promise<void> {
    return this.add({ kind: 'committed', id, parts: partCounts(parts) })
  }

  /** Counts a landed batch; written within `intervalMs`. */
  recordLanded(id: CountedBatch, parts: readonly CountedPart[]): Promise<void> {
    return this.add({ kind: 'landed', id, parts: partCounts(parts) })
  }

  /** Writes what is counted so far (after any write under way). Rejects if that write fails. */
  flush(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    const entries = this.entries
    this.entries = []
    this.writing = this.writing
      .catch(() => {})
      .then(() => this.counters.recordAll(entries))
      .catch((error: unknown) => {
        // Kept for the next write, in front of what came since.
        this.entries = [...entries, ...this.entries]
        throw error
      })
    return this.writing
  }

  /** Writes what is left; no timer stays behind. */
  async close(): Promise<void> {
    await this.flush()
  }

  private async add(entry: CountedEntry): Promise<void> {
    this.entries.push(entry)
    if (this.timer !== undefined) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.flush().catch(this.options.onError)
    }, this.options.intervalMs)
    // The sync closes the buffer when it ends; a timer must not keep a finished process alive.
    this.timer.unref()
  }
}
