/**
 * DynamoDB state store failures, each one line naming the table and region (never a credential),
 * classified: the table, the settings, the credentials and the permissions are the operator's to
 * fix and are permanent; throttling, server errors and a request that got no answer are
 * `transient`: the same call may succeed later.
 */
import { StateError } from '@skippr/state'

export const DYNAMODB_CONFIG_INVALID = 'SKIPPR_DYNAMODB_CONFIG_INVALID'
export const DYNAMODB_TABLE_MISSING = 'SKIPPR_DYNAMODB_TABLE_MISSING'
export const DYNAMODB_TABLE_MISMATCH = 'SKIPPR_DYNAMODB_TABLE_MISMATCH'
export const DYNAMODB_ACCESS_DENIED = 'SKIPPR_DYNAMODB_ACCESS_DENIED'
export const DYNAMODB_REQUEST_REFUSED = 'SKIPPR_DYNAMODB_REQUEST_REFUSED'
export const DYNAMODB_ITEM_TOO_LARGE = 'SKIPPR_DYNAMODB_ITEM_TOO_LARGE'
export const DYNAMODB_BAD_ITEM = 'SKIPPR_DYNAMODB_BAD_ITEM'
export const DYNAMODB_UNAVAILABLE = 'SKIPPR_DYNAMODB_UNAVAILABLE'

/** Which table a failure is about, for messages. */
export interface TableRef {
  readonly table: string
  readonly region: string
}

export class DynamoDbStateError extends StateError {
  /** The same call may succeed later (throttling, a server error, the network); retry it then. */
  readonly transient: boolean
  constructor(code: string, message: string, transient: boolean, cause?: unknown) {
    super(code, message, cause === undefined ? undefined : { cause })
    this.transient = transient
  }
}

export function tableName(ref: TableRef): string {
  return `dynamodb table '${ref.table}' in ${ref.region}`
}

export class TableMissingError extends DynamoDbStateError {
  constructor(ref: TableRef, cause?: unknown) {
    super(
      DYNAMODB_TABLE_MISSING,
      `the state store's ${tableName(ref)} does not exist: create it, or pass --create-store`,
      false,
      cause,
    )
  }
}

export class ItemTooLargeError extends DynamoDbStateError {
  constructor(ref: TableRef, key: string, bytes: number, cause: unknown) {
    super(
      DYNAMODB_ITEM_TOO_LARGE,
      `state key '${key}' does not fit in one item of ${tableName(ref)}: its value is ${bytes} bytes of JSON ` +
        'and an item holds at most 400 KB; this write can never succeed: keep the value smaller, or use the embedded store (--store-type sled)',
      false,
      cause,
    )
  }
}

/** What the SDK's errors carry. */
interface ServiceError {
  readonly name?: string
  readonly message?: string
  readonly $metadata?: { readonly httpStatusCode?: number }
}

const CREDENTIALS_REFUSED = new Set([
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'IncompleteSignatureException',
  'MissingAuthenticationTokenException',
  'ExpiredTokenException',
  'CredentialsProviderError',
])
const THROTTLED = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
])
const NEEDED_ACTIONS = 'dynamodb:DescribeTable, GetItem, PutItem, UpdateItem, DeleteItem and Query'

/** The SDK's error, thrown while `action` (e.g. `reading state key 'k'`), as a state store error. */
export function classify(error: unknown, action: string, ref: TableRef): DynamoDbStateError {
  const { name = '', message = String(error), $metadata } = (error ?? {}) as ServiceError
  const status = $metadata?.httpStatusCode
  const where = `${action} in ${tableName(ref)}`
  if (CREDENTIALS_REFUSED.has(name)) {
    return new DynamoDbStateError(
      DYNAMODB_ACCESS_DENIED,
      `${where}: the credentials were refused (${name}); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, ` +
        'or the AWS profile or role of this process',
      false,
      error,
    )
  }
  if (name === 'AccessDeniedException') {
    return new DynamoDbStateError(
      DYNAMODB_ACCESS_DENIED,
      `${where}: access denied (${message}); allow ${NEEDED_ACTIONS} on the table (and CreateTable for --create-store)`,
      false,
      error,
    )
  }
  if (name === 'ResourceNotFoundException') return new TableMissingError(ref, error)
  // No HTTP status: the request got no answer (refused or lost connection, timeout).
  if (THROTTLED.has(name) || status === undefined || status >= 500) {
    return new DynamoDbStateError(
      DYNAMODB_UNAVAILABLE,
      `${where} failed for now: ${status === undefined ? '' : `${status} ${name}: `}${message}; this is transient, retry later`,
      true,
      error,
    )
  }
  return new DynamoDbStateError(
    DYNAMODB_REQUEST_REFUSED,
    `${where}: refused with ${status} ${name} (${message}); the same request will be refused again`,
    false,
    error,
  )
}
