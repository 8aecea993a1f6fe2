/**
 * Every failure the store meets, classified: what a retry cannot fix (refused login, an unknown
 * host key, no permission, a path that cannot be a directory, an unusable key) is marked
 * `permanent`; anything else (network errors, timeouts, a lost connection, a server that fails a
 * request) is thrown plain, so the batch is retried. Each message is one line naming the location
 * (`sftp://user@host:port/path`, never a credential) and how to fix it.
 */
import { hasNetworkCode, permanent, SkipprError } from '@skippr/connector-api'
import { Status, statusOf } from './requests.js'

export const UNAVAILABLE = 'SKIPPR_SFTP_UNAVAILABLE'
export const REQUEST_FAILED = 'SKIPPR_SFTP_REQUEST_FAILED'
export const AUTHENTICATION_FAILED = 'SKIPPR_SFTP_AUTHENTICATION_FAILED'
export const KEY_UNUSABLE = 'SKIPPR_SFTP_KEY_UNUSABLE'
export const HOST_KEY_MISMATCH = 'SKIPPR_SFTP_HOST_KEY_MISMATCH'
export const PERMISSION_DENIED = 'SKIPPR_SFTP_PERMISSION_DENIED'
export const NOT_A_DIRECTORY = 'SKIPPR_SFTP_NOT_A_DIRECTORY'

/** The server could not be reached, did not answer in time, or the connection was lost: retried. */
export class UnavailableError extends SkipprError {
  constructor(location: string, cause: unknown) {
    super(
      UNAVAILABLE,
      `cannot reach the SFTP server of ${location}: ${describe(cause)}; the batch is retried once it answers`,
      { cause },
    )
  }
}

/** The server failed a request for a reason it did not name (SFTP's generic FAILURE, e.g. a full disk): retried. */
export class RequestFailedError extends SkipprError {
  constructor(action: string, where: string, cause: unknown) {
    super(
      REQUEST_FAILED,
      `the SFTP server failed to ${action} ${where}: ${describe(cause)}; the batch is retried (check the server's disk space and its log if this persists)`,
      { cause },
    )
  }
}

/** How the sink logs in, for the message that the login was refused. */
export type LoginMethod = 'password' | 'private_key'

export class AuthenticationError extends SkipprError {
  constructor(location: string, username: string, method: LoginMethod, cause: unknown) {
    super(
      AUTHENTICATION_FAILED,
      `the SFTP server of ${location} refused the login of user ${username} by ${method === 'password' ? 'password' : 'key'}: ` +
        `${describe(cause)}; check the sink's username and ${method}, and that the server allows this login`,
      { cause },
    )
  }
}

/** The private_key could not be read (not a key, encrypted without a passphrase, a wrong passphrase). */
export class KeyUnusableError extends SkipprError {
  constructor(location: string, cause: unknown) {
    super(
      KEY_UNUSABLE,
      `the sink's private_key for ${location} cannot be used: ${describe(cause)}; give the private key's text ` +
        '(OpenSSH or PEM format), and its passphrase if it is encrypted',
      { cause },
    )
  }
}

export class HostKeyMismatchError extends SkipprError {
  constructor(location: string, presented: string, expected: string) {
    super(
      HOST_KEY_MISMATCH,
      `the SFTP server of ${location} presented host key ${presented}, not the configured host_key ${expected}, ` +
        'so nothing was sent to it: another machine may answer in its place; if its key was changed on purpose, ' +
        "set host_key to the new fingerprint (ssh-keygen -lf on the server's public host key)",
    )
  }
}

export class PermissionDeniedError extends SkipprError {
  constructor(action: string, where: string, username: string, cause: unknown) {
    super(
      PERMISSION_DENIED,
      `the SFTP server denied user ${username} permission to ${action} ${where}: ${describe(cause)}; give the user write ` +
        "access to the sink's path, or choose a path it can write to",
      { cause },
    )
  }
}

/** A directory the store needs is taken by a file (or another kind of entry). */
export class NotADirectoryError extends SkipprError {
  constructor(where: string) {
    super(
      NOT_A_DIRECTORY,
      `${where} exists on the SFTP server and is not a directory, so nothing can be written under it: ` +
        'remove or rename it, or choose another path or prefix for the sink',
    )
  }
}

/** What a login needs to name in its errors. */
export interface LoginContext {
  readonly location: string
  readonly username: string
  readonly method: LoginMethod
}

/** Messages ssh2 gives when it cannot read the private key (thrown before anything is sent). */
const KEY_PROBLEM = /privateKey|private key|passphrase/i
/** ssh2's `level` of a failed connection attempt: socket, DNS and timeouts are worth retrying. */
const RETRIED_LEVELS: ReadonlySet<string> = new Set(['client-socket', 'client-dns', 'client-timeout'])

/** The error for a failed connection attempt (not a host key mismatch, which the verifier reports). */
export function loginFailure(error: unknown, login: LoginContext): Error {
  const level = (error as { level?: unknown } | null | undefined)?.level
  if (level === 'client-authentication' || /authentication methods failed/i.test(messageOf(error)))
    return permanent(new AuthenticationError(login.location, login.username, login.method, error))
  if (!hasNetworkCode(error) && !RETRIED_LEVELS.has(String(level)) && KEY_PROBLEM.test(messageOf(error)))
    return permanent(new KeyUnusableError(login.location, error))
  return new UnavailableError(login.location, error)
}

/**
 * The error for a refused or unanswered request: `action` and `where` name it in the message
 * (`create`, `sftp://…/orders/x.jsonl`). A request answered with no status lost its connection.
 */
export function requestFailure(error: unknown, action: string, where: string, login: LoginContext): Error {
  const status = statusOf(error)
  if (status === undefined) return new UnavailableError(login.location, error)
  if (status === Status.permissionDenied)
    return permanent(new PermissionDeniedError(action, where, login.username, error))
  return new RequestFailedError(action, where, error)
}

/** The cause as one line, without the client wrapper's `getConnection:` label. */
function describe(error: unknown): string {
  return messageOf(error)
    .replace(/^getConnection: /, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim()
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
