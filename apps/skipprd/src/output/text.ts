/** `--output text`: one plain line per event, as the README's "Example" shows them. */
import type { SyncEvent } from '../runner/events.js'
import type { Reporter } from './reporter.js'

export function textLine(event: SyncEvent): string | undefined {
  switch (event.type) {
    case 'start':
      return `Sync started: pipeline=${event.pipeline}`
    case 'phase':
      return event.state === 'start' ? `[start] ${event.phase}` : `[done]  ${event.phase}`
    case 'complete':
      return `Sync complete: pipeline=${event.pipeline} namespaces=${event.namespaces} rows=${event.rowsWritten}${deadletters(event)} elapsed=${event.elapsedMs}ms`
    case 'skipped':
      return event.message
    default:
      // Discovery and errors: errors go to stderr as one `[skippr] … failed:` line.
      return undefined
  }
}

export function textReporter(write: (text: string) => void): Reporter {
  return {
    event(event) {
      const line = textLine(event)
      if (line !== undefined) write(`${line}\n`)
    },
    close() {},
  }
}

/** ` deadletters=N [discarded=M]`, only when the run set rows aside. */
function deadletters(event: { readonly deadletterRows: number; readonly discardedRows: number }): string {
  if (event.deadletterRows === 0) return ''
  return ` deadletters=${event.deadletterRows}${event.discardedRows > 0 ? ` discarded=${event.discardedRows}` : ''}`
}
