/**
 * Turns a failure to open, check or publish into the runner's decision. A lost or refused
 * connection, a nack and a broker shutting a channel for load are transient; refused credentials,
 * a missing vhost or exchange, and a publish the broker refuses outright are not.
 */
import type { WriteOutcome } from '@skippr/connector-api'
import { cannotLand, hasNetworkCode, retryLater } from '@skippr/connector-api'
import type { AmqpSinkError } from './errors.js'
import {
  AccessRefusedError,
  ExchangeMissingError,
  RejectedError,
  replyCodeOf,
  TransientError,
  UnavailableError,
  VhostRefusedError,
} from './errors.js'

/** What amqplib says, without a code, when a socket ends, times out or stops answering. */
const NETWORK_MESSAGES =
  /ETIMEDOUT|Socket closed abruptly|Unexpected close|Heartbeat timeout|Connection closed/

/** The broker closes the connection this way when the vhost is missing or not permitted (530). */
const VHOST_REFUSAL = /Expected ConnectionOpenOk; got <ConnectionClose/

/** Reply codes no retry can fix: access, a missing entity, a failed precondition, a bad path or size. */
const REFUSALS = new Set([311, 402, 403, 404, 406, 530])

export interface FailureContext {
  /** The broker, redacted (`describeTarget`). */
  readonly target: string
  readonly vhost: string
  readonly exchange: string
}

export interface Failure {
  readonly retry: boolean
  readonly error: AmqpSinkError
}

export function classify(error: unknown, at: FailureContext): Failure {
  const message = error instanceof Error ? error.message : String(error)
  if (VHOST_REFUSAL.test(message))
    return { retry: false, error: new VhostRefusedError(at.target, at.vhost, error) }
  const reply = replyCodeOf(error)
  if (reply === 403) return { retry: false, error: new AccessRefusedError(at.target, error) }
  if (reply === 404) return { retry: false, error: new ExchangeMissingError(at.target, at.exchange, error) }
  if (reply === 530) return { retry: false, error: new VhostRefusedError(at.target, at.vhost, error) }
  if (reply !== undefined && REFUSALS.has(reply))
    return { retry: false, error: new RejectedError(at.target, at.exchange, error) }
  if (hasNetworkCode(error) || NETWORK_MESSAGES.test(message))
    return { retry: true, error: new UnavailableError(at.target, error) }
  return { retry: true, error: new TransientError(at.target, error) }
}

export function outcomeOf(failure: Failure): WriteOutcome {
  return failure.retry ? retryLater(failure.error) : cannotLand(failure.error)
}
