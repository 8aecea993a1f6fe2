/**
 * Errors carry a stable `code`; match on it, never on `instanceof` (two copies of this package
 * in one process would not share classes).
 */
export class SkipprError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

export const CONFIG_INVALID = 'SKIPPR_CONFIG_INVALID'

/** Bad configuration. The message is one line: where, what, how to fix. */
export class ConfigError extends SkipprError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(CONFIG_INVALID, message, options)
  }
}

export const BAD_RECORD = 'SKIPPR_BAD_RECORD'

/** A record does not match its schema (e.g. `abc` in an int column): the batch can never land as it is. */
export class BadRecordError extends SkipprError {
  constructor(namespace: string, detail: string, cause?: unknown) {
    super(
      BAD_RECORD,
      `namespace ${namespace}: ${detail}; the record does not match its schema, fix the source data`,
      {
        cause,
      },
    )
  }
}

export function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code
}
