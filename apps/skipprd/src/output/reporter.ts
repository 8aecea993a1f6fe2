/** How a command shows a run: one of the `--output` modes. */
import type { SyncEvent } from '../runner/events.js'

export const OUTPUT_MODES = ['progress', 'text', 'json'] as const
export type OutputMode = (typeof OUTPUT_MODES)[number]

export interface Reporter {
  event(event: SyncEvent): void
  /** Stops timers; resolves when the display has finished drawing. */
  close(): void | Promise<void>
}

export const silentReporter: Reporter = { event() {}, close() {} }
