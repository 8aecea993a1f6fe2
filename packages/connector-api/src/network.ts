/**
 * Node's (and undici's) error codes for a connection that could not be opened or was lost. The
 * destination may answer next time, so a sink retries a failure carrying one of them.
 */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
])

/** Whether `error` carries one of the codes of a connection not opened or lost. */
export function hasNetworkCode(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' && NETWORK_ERROR_CODES.has(code)
}
