/**
 * What a sync run reports, independent of how it is shown (output/text, json, progress). The
 * run's counters live in one `RunProgress` object that displays read at their own pace: the JSON
 * output samples it every 10 s, the terminal display a few times a second.
 */

export type Phase = 'Ingesting' | 'Finalising'

export type SyncEvent =
  | {
      readonly type: 'start'
      readonly pipeline: string
      readonly runId: string
      readonly progress: RunProgress
      /** The pipeline's data_sinks entry; undefined without one. */
      readonly sink: string | undefined
    }
  | {
      readonly type: 'namespace_discovered'
      readonly pipeline: string
      readonly runId: string
      readonly namespace: string
      readonly fieldCount: number
    }
  | {
      readonly type: 'phase'
      readonly pipeline: string
      readonly runId: string
      readonly phase: Phase
      readonly state: 'start' | 'done'
    }
  | {
      readonly type: 'error'
      readonly pipeline: string
      readonly runId: string
      /** The message, as shown to the operator. */
      readonly error: string
      /** The error the run ends with (thrown after this event). */
      readonly cause: unknown
    }
  | {
      readonly type: 'complete'
      readonly pipeline: string
      readonly runId: string
      readonly namespaces: number
      readonly rowsWritten: number
      /** Rows set aside as deadletters, and of those the ones dropped for want of a deadletter sink. */
      readonly deadletterRows: number
      readonly discardedRows: number
      readonly elapsedMs: number
    }
  | {
      readonly type: 'skipped'
      readonly pipeline: string
      readonly reason: SkipReason
      readonly message: string
    }

export type SyncListener = (event: SyncEvent) => void

export interface NamespaceCounters {
  rowsRead: number
  bytesRead: number
  rowsWritten: number
  deadletterRows: number
}

/** How a sink answered a write attempt, as the metrics label it. */
export type WriteAnswer = 'landed' | 'already_landed' | 'refused' | 'retry' | 'fatal'

/** Upper bounds (seconds) of the write-duration histogram's buckets. */
export const WRITE_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const

/** Write attempts by answer, and their durations bucketed as WRITE_SECONDS_BUCKETS (cumulative, `+Inf` last). */
export class WriteStats {
  readonly answers = new Map<WriteAnswer, number>()
  readonly buckets: number[] = new Array(WRITE_SECONDS_BUCKETS.length + 1).fill(0)
  seconds = 0
  count = 0

  record(answer: WriteAnswer, seconds: number): void {
    this.answers.set(answer, (this.answers.get(answer) ?? 0) + 1)
    for (let i = 0; i < this.buckets.length; i++)
      if (i === WRITE_SECONDS_BUCKETS.length || seconds <= (WRITE_SECONDS_BUCKETS[i] as number))
        this.buckets[i] = (this.buckets[i] as number) + 1
    this.seconds += seconds
    this.count += 1
  }
}

/**
 * Live counters of one run: the one source the displays (sync_status, the terminal) and the
 * metrics endpoint read, so they agree.
 */
export class RunProgress {
  readonly startedAt = Date.now()
  phase: Phase = 'Ingesting'
  uploadsInFlight = 0
  /** Deadletters dropped because the pipeline has no deadletter sink. */
  discarded = 0
  readonly namespaces = new Map<string, NamespaceCounters>()
  /** Rows and bytes committed to the WAL, per namespace. */
  readonly committed = new Map<string, { rows: number; bytes: number }>()
  /** Batches in the WAL not landed yet that this run committed or met: seq → bytes and since when. */
  readonly pending = new Map<bigint, { readonly bytes: number; readonly since: number }>()
  readonly writes = new WriteStats()
  /** Writes the destination refused for a stale fencing token. */
  fenceRefusals = 0
  /** Times reading waited for landed batches to free room in the WAL (WAL_MAX_TOTAL_BYTES). */
  backpressureStalls = 0
  /** The writer lease this run holds, once it holds it. */
  lease: { readonly token: bigint; readonly takeover: boolean } | undefined

  batchCommitted(seq: bigint, parts: readonly { namespace: string; rows: number; bytes: number }[]): void {
    let bytes = 0
    for (const part of parts) {
      const counters = this.committed.get(part.namespace) ?? { rows: 0, bytes: 0 }
      counters.rows += part.rows
      counters.bytes += part.bytes
      this.committed.set(part.namespace, counters)
      bytes += part.bytes
    }
    this.pending.set(seq, { bytes, since: Date.now() })
  }

  /** A pending batch found in the WAL (committed by an earlier run): at least as old as this run. */
  batchMet(seq: bigint, bytes: number): void {
    if (!this.pending.has(seq)) this.pending.set(seq, { bytes, since: this.startedAt })
  }

  batchLanded(seq: bigint): void {
    this.pending.delete(seq)
  }

  read(namespace: string, rows: number, bytes: number): void {
    const counters = this.counters(namespace)
    counters.rowsRead += rows
    counters.bytesRead += bytes
  }

  written(namespace: string, rows: number): void {
    this.counters(namespace).rowsWritten += rows
  }

  deadlettered(namespace: string, rows: number): void {
    this.counters(namespace).deadletterRows += rows
  }

  get deadletterRows(): number {
    return this.sum('deadletterRows')
  }

  get rowsRead(): number {
    return this.sum('rowsRead')
  }

  get bytesRead(): number {
    return this.sum('bytesRead')
  }

  get rowsWritten(): number {
    return this.sum('rowsWritten')
  }

  elapsedMs(now = Date.now()): number {
    return now - this.startedAt
  }

  counters(namespace: string): NamespaceCounters {
    let counters = this.namespaces.get(namespace)
    if (!counters) {
      counters = { rowsRead: 0, bytesRead: 0, rowsWritten: 0, deadletterRows: 0 }
      this.namespaces.set(namespace, counters)
    }
    return counters
  }

  private sum(key: keyof NamespaceCounters): number {
    let total = 0
    for (const counters of this.namespaces.values()) total += counters[key]
    return total
  }
}

/** Why a pipeline was not synced: disabled, ran within its frequency, or another sync holds it. */
export type SkipReason = 'disabled' | 'frequency' | 'leased'
