/** Where the slot reports recovery findings and background failures. Fields are structured extras. */
export interface SlotLogger {
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

const PREFIX = '[@skippr/sf]'

/** Warnings and errors go to stderr; informational messages are dropped unless a logger is passed. */
export const defaultLogger: SlotLogger = {
  info() {},
  warn(message, fields) {
    console.warn(PREFIX, message, ...(fields ? [fields] : []))
  },
  error(message, fields) {
    console.error(PREFIX, message, ...(fields ? [fields] : []))
  },
}
