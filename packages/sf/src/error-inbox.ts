/**
 * A bounded queue between the I/O loop and the user's error handler. The I/O loop never waits for the
 * handler; notifications that do not fit are counted as dropped, never silently lost.
 */

import { defaultLogger } from './logger.js'
import type { SenderCounters } from './sender-counters.js'

export type ErrorHandler = (error: Error) => void | Promise<void>

/** Logs HALT and other terminal errors at error level, DROP at warn level. */
export const defaultErrorHandler: ErrorHandler = (error) => {
  const fields = { code: (error as { code?: unknown }).code }
  if ((error as { category?: unknown }).category === 'DROP') defaultLogger.warn(error.message, fields)
  else defaultLogger.error(error.message, fields)
}

export class ErrorInbox {
  private readonly queue: Error[] = []
  private running: Promise<void> | undefined
  private readonly delivered = new WeakSet<Error>()

  constructor(
    private readonly capacity: number,
    private readonly handler: ErrorHandler,
    private readonly counters: SenderCounters,
  ) {}

  post(error: Error): void {
    if (this.queue.length >= this.capacity) {
      this.counters.droppedErrorNotifications++
      return
    }
    this.queue.push(error)
    this.running ??= this.dispatch()
  }

  /** Whether the handler has already received this error. */
  wasDelivered(error: Error): boolean {
    return this.delivered.has(error)
  }

  /** Waits up to `ms` for queued notifications to reach the handler; the rest count as dropped. */
  async settle(ms: number): Promise<void> {
    if (this.running) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([this.running, new Promise<void>((r) => (timer = setTimeout(r, ms)))])
      clearTimeout(timer)
    }
    this.counters.droppedErrorNotifications += this.queue.length
    this.queue.length = 0
  }

  private async dispatch(): Promise<void> {
    // Run the handler outside the I/O loop's call stack.
    await new Promise((resolve) => setImmediate(resolve))
    for (let error = this.queue.shift(); error; error = this.queue.shift()) {
      try {
        await this.handler(error)
      } catch (e) {
        defaultLogger.error(
          `the error handler threw while handling "${error.message}": ${(e as Error)?.message ?? e}`,
        )
      }
      this.delivered.add(error)
      this.counters.totalErrorNotificationsDelivered++
    }
    this.running = undefined
  }
}
