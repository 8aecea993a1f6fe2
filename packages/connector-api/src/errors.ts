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

/**
 * A remote service's failure (a warehouse API, a driver), as one line: the service's own reason
 * (its error code or reason name) and whether a retry can help, so a sink classifies it once.
 */
export class ServiceError extends SkipprError {
  constructor(
    code: string,
    message: string,
    readonly reason: string,
    readonly retryable: boolean,
    cause?: unknown,
  ) {
    super(code, message, { cause })
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

export const ROW_COUNT_MISMATCH = 'SKIPPR_ROW_COUNT_MISMATCH'

/** Where a batch's rows were loaded and how many: what a row-count mismatch reports. */
export interface RowCountCheck {
  /** The destination, as the message shows it: `table "public"."orders"`, `file out/orders/….csv`. */
  readonly target: string
  /** The batch's `batchKey`, or several joined by `, ` when one load held their parts. */
  readonly batch: string
  /** The rows the batch's parts declare. */
  readonly expected: number
  /** The rows the destination reports it loaded (or the sink wrote). */
  readonly loaded: number
}

/**
 * The destination loaded another number of rows than the batch declares: some record of the body
 * was read differently from how the source counted it. Every sink checks the count before a batch
 * counts as landed (inside its transaction, before its files become visible) and refuses the batch
 * whole on a mismatch, so nothing of it lands and its identity stays unrecorded.
 */
export class RowCountMismatchError extends SkipprError implements RowCountCheck {
  readonly target: string
  readonly batch: string
  readonly expected: number
  readonly loaded: number
  constructor(check: RowCountCheck) {
    super(
      ROW_COUNT_MISMATCH,
      `${check.target}, batch ${check.batch}: the batch declares ${check.expected} rows but ${check.loaded} ` +
        'were loaded, so nothing of it was written; a record in its body reads differently to the ' +
        'destination than to the source (a stray quote, a line the loader takes for the end of the data, ' +
        'a blank or unterminated line); find that record in the source data, fix it and run again',
    )
    this.target = check.target
    this.batch = check.batch
    this.expected = check.expected
    this.loaded = check.loaded
  }
}

export function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code
}

const PERMANENT = Symbol.for('skippr.permanent')

/**
 * Marks an error that no retry can fix (a refused schema, missing database or permission): thrown
 * from a sink's `prepare` or its opening, it stops the pipeline at once instead of being retried
 * until the retry budget runs out. A symbol, not a class, so copies of this package agree.
 */
export function permanent<E extends Error>(error: E): E {
  Object.defineProperty(error, PERMANENT, { value: true })
  return error
}

/** Whether `error` was marked with `permanent`. */
export function isPermanent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[PERMANENT] === true
}
