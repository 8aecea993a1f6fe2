/** Reading the SDK's errors: their HTTP status, name and a one-line message without credentials. */

/** What the SDK's errors carry. */
interface ServiceError {
  readonly name?: string
  readonly message?: string
  readonly code?: string
  readonly cause?: unknown
  readonly $metadata?: { readonly httpStatusCode?: number }
}

const CREDENTIALS_REFUSED = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'CredentialsProviderError',
])

export function statusOf(error: unknown): number | undefined {
  return (error as ServiceError | undefined)?.$metadata?.httpStatusCode
}

export function nameOf(error: unknown): string {
  return (error as ServiceError | undefined)?.name ?? ''
}

/** The credentials themselves were refused or are missing (not a permission on one object). */
export function isCredentialsRefused(error: unknown): boolean {
  return CREDENTIALS_REFUSED.has(nameOf(error))
}

/**
 * Worth retrying by its status: none (the request got no answer), a server error, throttling, a
 * timeout, or a conditional write racing another on the same key (retrying settles which won).
 */
export function isTransientStatus(error: unknown): boolean {
  const status = statusOf(error)
  if (status === undefined || status >= 500 || status === 429 || status === 408) return true
  return status === 409 && nameOf(error) === 'ConditionalRequestConflict'
}

/** One line: the service's message, its code, or the bare status of a HEAD (which has no body). */
export function messageOf(error: unknown): string {
  const e = error as ServiceError | undefined
  const code = e?.code ?? (e?.cause as ServiceError | undefined)?.code
  const status = statusOf(error)
  const bare = e?.message === 'UnknownError' || e?.name === 'UnknownError'
  const text = bare && status !== undefined ? `HTTP ${status}` : e?.message || e?.name || String(error)
  return code && !text.includes(code) ? `${text} (${code})` : text
}
