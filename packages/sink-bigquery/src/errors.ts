/**
 * BigQuery's failures as one line each, and whether a retry can help. The SDK throws an ApiError with
 * the HTTP status (`code`) and `errors[].reason`; a job that ran and failed carries the same reasons
 * in `status.errorResult`. Network failures carry Node's error codes.
 */
import { hasNetworkCode, ServiceError } from '@skippr/connector-api'

export const BIGQUERY_TRANSIENT = 'SKIPPR_BIGQUERY_TRANSIENT'
export const BIGQUERY_REFUSED = 'SKIPPR_BIGQUERY_REFUSED'

/** A failure of the BigQuery API or of a job, with its reason. */
export class BigqueryError extends ServiceError {}

/** Reasons a retry may fix (BigQuery's error table: backendError, rateLimitExceeded, …). */
const TRANSIENT_REASONS = new Set([
  'backendError',
  'internalError',
  'rateLimitExceeded',
  'quotaExceeded',
  'jobBackendError',
  'jobInternalError',
  'timeout',
  'tableUnavailable',
])

interface ApiErrorShape {
  code?: unknown
  message?: unknown
  errors?: { reason?: string; message?: string }[]
}

/** The HTTP status of an SDK ApiError, or undefined for anything else. */
export function httpStatus(error: unknown): number | undefined {
  const code = (error as ApiErrorShape | undefined)?.code
  return typeof code === 'number' ? code : undefined
}

export function reasonOf(error: unknown): string | undefined {
  return (error as ApiErrorShape | undefined)?.errors?.[0]?.reason
}

/** `error` (an ApiError, a network error, a job's errorResult) as the sink's error for `target`. */
export function classify(error: unknown, target: string): BigqueryError {
  if (error instanceof BigqueryError) return error
  const status = httpStatus(error)
  const reason = reasonOf(error) ?? (status === undefined ? 'network' : `http ${status}`)
  const message = oneLine(error)
  if (
    status === undefined &&
    (hasNetworkCode(error) || /socket hang up|ECONN|fetch failed|network/i.test(message))
  )
    return new BigqueryError(
      BIGQUERY_TRANSIENT,
      `BigQuery ${target}: ${message}; will retry`,
      'network',
      true,
      error,
    )
  const retryable =
    (status !== undefined && (status === 429 || status >= 500)) || TRANSIENT_REASONS.has(reason)
  const hint =
    status === 401
      ? ' (the credentials were refused: check credentials or access_token)'
      : status === 403
        ? ' (the account lacks a permission on the dataset or project)'
        : ''
  return new BigqueryError(
    retryable ? BIGQUERY_TRANSIENT : BIGQUERY_REFUSED,
    `BigQuery ${target}: ${message}${hint}`,
    reason,
    retryable,
    error,
  )
}

/** A job's `status.errorResult` as an error of the same shape as an ApiError's. */
export function jobFailure(errorResult: { reason?: string; message?: string }): Error & ApiErrorShape {
  const error = new Error(errorResult.message ?? errorResult.reason ?? 'the job failed') as Error &
    ApiErrorShape
  error.errors = [{ reason: errorResult.reason ?? 'invalid', message: errorResult.message ?? '' }]
  return error
}

function oneLine(error: unknown): string {
  const apiError = error as ApiErrorShape | undefined
  const first = apiError?.errors?.[0]?.message
  const text =
    typeof first === 'string' && first.length > 0
      ? first
      : error instanceof Error
        ? error.message
        : String(error)
  return text.replace(/\s+/g, ' ').trim()
}
