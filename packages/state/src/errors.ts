/**
 * Errors carry a stable `code`; match on it, never on `instanceof` (two copies of this package
 * in one process would not share classes).
 */
export class StateError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

export const UNKNOWN_STORE_TYPE = 'SKIPPR_UNKNOWN_STORE_TYPE'
export const STATE_OPEN_FAILED = 'SKIPPR_STATE_OPEN_FAILED'
export const INVALID_STATE_NAME = 'SKIPPR_INVALID_STATE_NAME'
export const LEASE_UNAVAILABLE = 'SKIPPR_LEASE_UNAVAILABLE'
export const LEASE_LOST = 'SKIPPR_LEASE_LOST'
export const STALE_FENCE = 'SKIPPR_STALE_FENCE'
export const STATE_WRITE_CONFLICT = 'SKIPPR_STATE_WRITE_CONFLICT'

export class UnknownStoreTypeError extends StateError {
  constructor(type: string, known: readonly string[]) {
    super(
      UNKNOWN_STORE_TYPE,
      `unknown store type '${type}': expected ${known.join(' or ')} (set --store-type or SKIPPR_STORE_TYPE)`,
    )
  }
}

export class StateOpenError extends StateError {
  constructor(location: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    super(
      STATE_OPEN_FAILED,
      `cannot open the state store at ${location}: ${reason}; check that DATA_DIR is writable and not on a network filesystem`,
      { cause },
    )
  }
}

export class InvalidStateNameError extends StateError {
  constructor(kind: string, name: string) {
    super(INVALID_STATE_NAME, `invalid ${kind} name ${JSON.stringify(name)}: use a non-empty name`)
  }
}

/** Who holds a lease, as seen by someone who could not get it. */
export interface LeaseHolder {
  readonly owner: string
  readonly token: bigint
  /** Milliseconds since the holder's last heartbeat. */
  readonly heartbeatAgeMs: number
}

export class LeaseUnavailableError extends StateError {
  readonly pipeline: string
  readonly holder: LeaseHolder
  constructor(pipeline: string, holder: LeaseHolder, waitedMs: number) {
    super(
      LEASE_UNAVAILABLE,
      `pipeline writer lease unavailable: pipeline '${pipeline}' is held by '${holder.owner}' ` +
        `(token ${holder.token}, last heartbeat ${holder.heartbeatAgeMs} ms ago; waited ${waitedMs} ms). ` +
        'Another sync is writing this pipeline: let it finish or stop it',
    )
    this.pipeline = pipeline
    this.holder = holder
  }
}

export class LeaseLostError extends StateError {
  readonly pipeline: string
  readonly token: bigint
  constructor(pipeline: string, token: bigint, situation: string) {
    super(
      LEASE_LOST,
      `pipeline writer lease lost: pipeline '${pipeline}' token ${token} ${situation}. ` +
        'Stop writing; another writer may own the pipeline now',
    )
    this.pipeline = pipeline
    this.token = token
  }
}

export class StaleFenceError extends StateError {
  readonly pipeline: string
  readonly token: bigint
  constructor(pipeline: string, token: bigint, situation: string) {
    super(
      STALE_FENCE,
      `write refused: fencing token ${token} for pipeline '${pipeline}' is stale (${situation}). ` +
        'This writer no longer holds the pipeline writer lease; stop and let the current holder write',
    )
    this.pipeline = pipeline
    this.token = token
  }
}

export class WriteConflictError extends StateError {
  constructor(key: string, attempts: number) {
    super(
      STATE_WRITE_CONFLICT,
      `state key '${key}' kept changing under ${attempts} conditional writes; ` +
        'too many processes are updating it at once, retry later',
    )
  }
}

export function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code
}
