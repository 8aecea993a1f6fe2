/** The logging surface connectors get. The runner backs it with its structured logger. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
}
