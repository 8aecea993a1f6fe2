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

/** Live counters of one run. */
export class RunProgress {
  readonly startedAt = Date.now()
  phase: Phase = 'Ingesting'
  uploadsInFlight = 0
  /** Deadletters dropped because the pipeline has no deadletter sink. */
  discarded = 0
  readonly namespaces = new Map<string, NamespaceCounters>()

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
