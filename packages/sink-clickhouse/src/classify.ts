/**
 * Turns a failed request into the runner's decision: retry later, or this batch can never land.
 * 18.16 answers every exception with HTTP 500, so the server's error code decides, not the status.
 */
import type { WriteOutcome } from '@skippr/connector-api'
import { cannotLand, hasNetworkCode, retryLater } from '@skippr/connector-api'
import type { ClickhouseSinkError } from './errors.js'
import {
  AuthenticationError,
  DataRejectedError,
  PermissionDeniedError,
  StatementRejectedError,
  serverCodeOf,
  TransientError,
  UnavailableError,
} from './errors.js'

/** What the client raises without a code when a request times out or the socket closes. */
const NETWORK_MESSAGES = /timeout|socket hang up|other side closed/i

/** UNKNOWN_USER, WRONG_PASSWORD, REQUIRED_PASSWORD, AUTHENTICATION_FAILED. */
const AUTHENTICATION = new Set([192, 193, 194, 516])
/** READONLY, ACCESS_DENIED. */
const ACCESS = new Set([164, 497])
/**
 * Timeouts, too many queries or parts, memory limits, network errors between servers, a read-only
 * replica, ZooKeeper or quorum trouble, an insert whose outcome is unknown, cancellation.
 */
const TRANSIENT = new Set([159, 160, 202, 203, 209, 210, 225, 236, 241, 242, 252, 285, 286, 319, 394, 999])
/**
 * The server could not read or convert a value sent (CANNOT_PARSE_*, TYPE_MISMATCH, INCORRECT_DATA,
 * CANNOT_READ_ALL_DATA, …): the sink checks every value first, so this means a column it did not expect.
 */
const DATA = new Set([6, 26, 27, 32, 33, 38, 41, 53, 69, 70, 72, 117, 131])

export interface FailureContext {
  /** The table being written or altered, quoted as in SQL. */
  readonly table: string
  /** The server, as `describeTarget` shows it. */
  readonly target: string
  readonly user: string
}

export interface Failure {
  readonly retry: boolean
  readonly error: ClickhouseSinkError
}

export function classify(error: unknown, at: FailureContext): Failure {
  const code = serverCodeOf(error)
  if (code === undefined) {
    const message = error instanceof Error ? error.message : String(error)
    if (hasNetworkCode(error) || NETWORK_MESSAGES.test(message))
      return { retry: true, error: new UnavailableError(at.target, error) }
    // No server code: a proxy's 5xx, an answer cut short. The request may succeed next time.
    return { retry: true, error: new TransientError(at.table, error) }
  }
  if (TRANSIENT.has(code)) return { retry: true, error: new TransientError(at.table, error) }
  if (AUTHENTICATION.has(code))
    return { retry: false, error: new AuthenticationError(at.target, at.user, error) }
  if (ACCESS.has(code)) return { retry: false, error: new PermissionDeniedError(at.target, at.table, error) }
  if (DATA.has(code)) return { retry: false, error: new DataRejectedError(at.table, error) }
  return { retry: false, error: new StatementRejectedError(at.target, at.table, error) }
}

export function outcomeOf(failure: Failure): WriteOutcome {
  return failure.retry ? retryLater(failure.error) : cannotLand(failure.error)
}
