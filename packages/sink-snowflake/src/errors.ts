/**
 * Snowflake's failures as one line each, and whether a retry can help. The driver's errors carry
 * Snowflake's error code (`code`, e.g. 390100 for a refused login) and the SQL state; its own
 * network errors have codes 401001–402002 and Node's error codes beneath.
 */
import { hasNetworkCode, ServiceError } from '@skippr/connector-api'

export const SNOWFLAKE_TRANSIENT = 'SKIPPR_SNOWFLAKE_TRANSIENT'
export const SNOWFLAKE_REFUSED = 'SKIPPR_SNOWFLAKE_REFUSED'

/** Snowflake's failure, with its reason (Snowflake's error code, or `network`). */
export class SnowflakeError extends ServiceError {}

interface DriverError {
  code?: unknown
  sqlState?: unknown
  message?: unknown
}

/** The driver's codes of a request that never got an answer. */
const NETWORK_CODES = new Set(['401001', '401002', '402001', '402002'])
/** Snowflake's codes a retry may fix: session expired, statement timed out or queued out, internal. */
const TRANSIENT_CODES = new Set(['390112', '390114', '000604', '000625', '000630', '000603'])

const HINTS: Record<string, string> = {
  '390100': ' (the login was refused: check username and password or private_key)',
  '390144': ' (the key-pair login was refused: check private_key and the public key set on the user)',
  '000606': ' (check warehouse: it does not exist or the role may not use it)',
}

export function codeOf(error: unknown): string {
  const code = (error as DriverError | undefined)?.code
  return code === undefined || code === null ? '' : String(code)
}

/** `error` (a driver error, a network error) as the sink's error for `target`. */
export function classify(error: unknown, target: string): SnowflakeError {
  if (error instanceof SnowflakeError) return error
  const code = codeOf(error)
  const message = oneLine(error)
  if (NETWORK_CODES.has(code) || hasNetworkCode(error) || /ECONN|socket hang up|network/i.test(message))
    return new SnowflakeError(
      SNOWFLAKE_TRANSIENT,
      `Snowflake ${target}: ${message}; will retry`,
      'network',
      true,
      error,
    )
  const retryable = TRANSIENT_CODES.has(code)
  return new SnowflakeError(
    retryable ? SNOWFLAKE_TRANSIENT : SNOWFLAKE_REFUSED,
    `Snowflake ${target}: ${message}${HINTS[code] ?? ''}`,
    code || 'unknown',
    retryable,
    error,
  )
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String((error as DriverError)?.message ?? error)
  return text.replace(/\s+/g, ' ').trim()
}
