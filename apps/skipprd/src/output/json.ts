/**
 * `--output json`: one JSON object per line, the events of the README's "Output" table. Every event has
 * `event`, `phase`, `pipeline`, the event's fields, `timestamp` and `run_id`. `sync_status` is
 * sampled from the run's counters every `statusIntervalMs` (10 s) while the run is active.
 * `sync_skipped` (not in the vendor's list) reports a pipeline that was not run.
 */
import type { RunProgress } from '../runner/events.js'
import type { Reporter } from './reporter.js'

export const STATUS_INTERVAL_MS = 10_000

type Fields = Record<string, string | number>

export function jsonReporter(
  write: (text: string) => void,
  options: { statusIntervalMs?: number; now?: () => Date } = {},
): Reporter {
  const now = options.now ?? (() => new Date())
  let timer: NodeJS.Timeout | undefined
  const emit = (event: string, phase: string, pipeline: string, fields: Fields, runId?: string): void => {
    const line = {
      event,
      phase,
      pipeline,
      ...fields,
      timestamp: timestamp(now()),
      ...(runId && { run_id: runId }),
    }
    write(`${JSON.stringify(line)}\n`)
  }
  const stopStatus = (): void => {
    clearInterval(timer)
    timer = undefined
  }
  return {
    event(e) {
      switch (e.type) {
        case 'start':
          emit('sync_start', 'start', e.pipeline, {}, e.runId)
          stopStatus()
          timer = setInterval(
            () =>
              emit(
                'sync_status',
                e.progress.phase.toLowerCase(),
                e.pipeline,
                statusFields(e.progress),
                e.runId,
              ),
            options.statusIntervalMs ?? STATUS_INTERVAL_MS,
          )
          timer.unref()
          return
        case 'namespace_discovered':
          return emit(
            'namespace_discovered',
            'discover',
            e.pipeline,
            { namespace: e.namespace, field_count: e.fieldCount },
            e.runId,
          )
        case 'error':
          stopStatus()
          return emit('sync_error', 'error', e.pipeline, { error: e.error }, e.runId)
        case 'complete':
          stopStatus()
          return emit(
            'sync_complete',
            'complete',
            e.pipeline,
            {
              namespaces_synced: e.namespaces,
              total_rows: e.rowsWritten,
              // The vendor's fields as they are, and what was set aside only when something was.
              ...(e.deadletterRows > 0 && {
                deadletter_rows: e.deadletterRows,
                discarded_rows: e.discardedRows,
              }),
              elapsed_ms: e.elapsedMs,
            },
            e.runId,
          )
        case 'skipped':
          return emit('sync_skipped', 'skipped', e.pipeline, { reason: e.reason, message: e.message })
        case 'phase':
          return
      }
    },
    close: stopStatus,
  }
}

function statusFields(progress: RunProgress): Fields {
  return {
    total_rows: progress.rowsRead,
    bytes: progress.bytesRead,
    rows_written: progress.rowsWritten,
    ...(progress.deadletterRows > 0 && { deadletter_rows: progress.deadletterRows }),
    uploads_in_flight: progress.uploadsInFlight,
    elapsed_ms: progress.elapsedMs(),
  }
}

/** ISO 8601 with microseconds and `+00:00`, as the vendor's events: `2026-10-09T14:02:11.204518+00:00`. */
export function timestamp(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000+00:00`
}
