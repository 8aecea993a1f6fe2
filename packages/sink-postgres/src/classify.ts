/**
 * Turns a failed write into the runner's decision: retry later, or this batch can never land.
 * Connection loss and contention are transient; refused data and refused access are not.
 */
import type { WriteOutcome } from '@skippr/connector-api'
import { cannotLand, hasNetworkCode, retryLater } from '@skippr/connector-api'
import type { PostgresSinkError } from './errors.js'
import {
  DataRejectedError,
  PermissionDeniedError,
  StatementRejectedError,
  sqlStateOf,
  TransientError,
  UnavailableError,
} from './errors.js'

/** Messages pg raises without a code when a connection ends or never opens in time. */
const NETWORK_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i

/** SQLSTATEs worth retrying: connection, contention, shutdown, resources, cancellation. */
function isTransientState(state: string): boolean {
  return (
    ['08', '53', '57', '58'].includes(state.slice(0, 2)) ||
    ['40001', '40P01', '55P03', '55006', 'XX000'].includes(state)
  )
}

export interface FailureContext {
  /** The table being written when it failed, quoted as in SQL. */
  readonly table: string
  /** The server, redacted. */
  readonly target: string
}

/** A failure as the runner must treat it. */
export interface Failure {
  readonly retry: boolean
  readonly error: PostgresSinkError
}

export function classify(error: unknown, at: FailureContext): Failure {
  const state = sqlStateOf(error)
  if (state === undefined) {
    const message = error instanceof Error ? error.message : String(error)
    if (hasNetworkCode(error) || NETWORK_MESSAGES.test(message))
      return { retry: true, error: new UnavailableError(at.target, error) }
    return { retry: true, error: new TransientError(at.table, error) }
  }
  if (state.startsWith('08')) return { retry: true, error: new UnavailableError(at.target, error) }
  if (isTransientState(state)) return { retry: true, error: new TransientError(at.table, error) }
  if (state.startsWith('22') || state.startsWith('23'))
    return { retry: false, error: new DataRejectedError(at.table, error) }
  if (state === '42501') return { retry: false, error: new PermissionDeniedError(at.table, error) }
  return { retry: false, error: new StatementRejectedError(at.table, error) }
}

export function outcomeOf(failure: Failure): WriteOutcome {
  return failure.retry ? retryLater(failure.error) : cannotLand(failure.error)
}

/** Whether the connection itself may be broken, so it must not go back to the pool. */
export function breaksConnection(error: unknown): boolean {
  const state = sqlStateOf(error)
  return state === undefined || state.startsWith('08') || state.startsWith('57')
}
