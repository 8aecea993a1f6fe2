/**
 * Azure Blob failures, each one line naming the container or blob by its `azure://` location
 * (never a key or SAS token), classified: a missing container, refused credentials and missing
 * permissions are the operator's to fix and are `permanent`; throttling, server errors, timeouts
 * and a lost connection are retried.
 */
import { hasNetworkCode, permanent, SkipprError } from '@skippr/connector-api'

export const AZURE_CONTAINER_NOT_FOUND = 'SKIPPR_AZURE_CONTAINER_NOT_FOUND'
export const AZURE_AUTHENTICATION_FAILED = 'SKIPPR_AZURE_AUTHENTICATION_FAILED'
export const AZURE_PERMISSION_DENIED = 'SKIPPR_AZURE_PERMISSION_DENIED'
export const AZURE_REQUEST_REFUSED = 'SKIPPR_AZURE_REQUEST_REFUSED'
export const AZURE_UNREACHABLE = 'SKIPPR_AZURE_UNREACHABLE'
export const AZURE_TIMEOUT = 'SKIPPR_AZURE_TIMEOUT'
export const AZURE_UNAVAILABLE = 'SKIPPR_AZURE_UNAVAILABLE'

/** Where a request went: the blob's or the container's location, and the container's name for the fix. */
export interface RequestTarget {
  /** `azure://account/container/prefix[/key]`. */
  readonly where: string
  readonly container: string
}

/** What the SDK's `RestError` carries. A HEAD answer has no body, so its code is only in `details`. */
interface ServiceError {
  readonly name?: string
  readonly message?: string
  readonly code?: string
  readonly statusCode?: number
  readonly details?: { readonly errorCode?: string }
}

/**
 * The service refused the credentials. Azure says `AuthenticationFailed` for a wrong key or SAS
 * signature; Azurite says `AuthorizationFailure`, which Azure also answers when its network rules
 * keep the host out.
 */
const CREDENTIALS_REFUSED = new Set([
  'AuthenticationFailed',
  'AuthorizationFailure',
  'InvalidAuthenticationInfo',
  'NoAuthenticationInformation',
  'KeyBasedAuthenticationNotPermitted',
])

/** 409: a lease held or a container being deleted; 429: throttled. Both pass. */
const RETRIED_4XX = new Set([409, 429])

/** Transport failures the SDK names itself, beside Node's network codes. */
const TRANSPORT_CODES = new Set(['REQUEST_SEND_ERROR', 'ESOCKETTIMEDOUT'])

/** The refusal of a conditional request: 409 BlobAlreadyExists (Put Blob, Put Block List) or 412 ConditionNotMet. */
export function isAlreadyThere(error: unknown): boolean {
  const status = statusOf(error)
  const code = errorCodeOf(error)
  return (
    (status === 412 && (code === undefined || code === 'ConditionNotMet')) ||
    (status === 409 && code === 'BlobAlreadyExists')
  )
}

/** Whether the service answered 404 for a blob (not for its container). */
export function isBlobNotFound(error: unknown): boolean {
  return statusOf(error) === 404 && errorCodeOf(error) !== 'ContainerNotFound'
}

function statusOf(error: unknown): number | undefined {
  return (error as ServiceError | undefined)?.statusCode
}

/** The service's error code (`x-ms-error-code`), or the SDK's transport code. */
function errorCodeOf(error: unknown): string | undefined {
  const e = error as ServiceError | undefined
  return e?.details?.errorCode ?? e?.code
}

/**
 * The SDK's error as the error the sink hands the runner. The SDK's error is not kept as the cause:
 * it holds the request, whose URL carries a SAS token and whose headers carry a signature.
 */
export function classify(error: unknown, target: RequestTarget): Error {
  const { where, container } = target
  const status = statusOf(error)
  const code = errorCodeOf(error)
  const detail = describe(error)
  if (code === 'ContainerNotFound')
    return refused(
      AZURE_CONTAINER_NOT_FOUND,
      `${where}: the container ${container} does not exist: create container ${container} or fix container`,
    )
  if ((code !== undefined && CREDENTIALS_REFUSED.has(code)) || status === 401)
    return refused(
      AZURE_AUTHENTICATION_FAILED,
      `${where}: Azure refused the credentials (${detail}): check the account key in connection_string, or sas_token ` +
        "(its signature, start and expiry), and that the storage account's network rules let this host in",
    )
  if (status === 403)
    return refused(
      AZURE_PERMISSION_DENIED,
      `${where}: not permitted (${detail}): the sink needs read, create and write permission on container ` +
        `${container}: a SAS with sp=rcw, or the account key`,
    )
  if (isAbort(error) || status === 408 || code === 'OperationTimedOut')
    return new SkipprError(
      AZURE_TIMEOUT,
      `${where}: Azure Blob Storage did not answer in time (${detail}); retried`,
    )
  if (status === undefined && (hasNetworkCode(error) || TRANSPORT_CODES.has(code ?? '')))
    return new SkipprError(
      AZURE_UNREACHABLE,
      `${where}: cannot reach Azure Blob Storage (${detail}); retried`,
    )
  if (status !== undefined && status >= 400 && status < 500 && !RETRIED_4XX.has(status))
    return refused(
      AZURE_REQUEST_REFUSED,
      `${where}: Azure refused the request (${detail}), which no retry changes: check container, prefix and the account's settings`,
    )
  return new SkipprError(
    AZURE_UNAVAILABLE,
    `${where}: Azure Blob Storage failed for now (${detail}); retried`,
  )
}

/** An error only the operator can fix. */
function refused(code: string, message: string): Error {
  return permanent(new SkipprError(code, message))
}

function isAbort(error: unknown): boolean {
  const name = (error as ServiceError | undefined)?.name
  return name === 'AbortError' || name === 'TimeoutError'
}

/**
 * `status code: first line of the service's message`, or the transport's own line (`connect
 * ECONNREFUSED 127.0.0.1:10000`), without anything that looks like a signature or key: the
 * service's messages quote the request at times.
 */
function describe(error: unknown): string {
  const status = statusOf(error)
  const code = errorCodeOf(error)
  const line = ((error as ServiceError | undefined)?.message ?? String(error)).split('\n')[0]?.trim() ?? ''
  const label = [status, code].filter((part) => part !== undefined).join(' ')
  const text =
    status === undefined && code !== undefined && line.includes(code)
      ? line
      : [label, line].filter(Boolean).join(': ')
  return redacted(text || 'no details')
}

function redacted(text: string): string {
  return text.replace(/\b(sig|AccountKey|SharedAccessSignature)=[^&;\s]+/gi, '$1=***')
}
