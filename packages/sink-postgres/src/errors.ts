import { SkipprError } from '@skippr/connector-api'

export const UNAVAILABLE = 'SKIPPR_PG_UNAVAILABLE'
export const TRANSIENT = 'SKIPPR_PG_TRANSIENT'
export const DATA_REJECTED = 'SKIPPR_PG_DATA_REJECTED'
export const PERMISSION_DENIED = 'SKIPPR_PG_PERMISSION_DENIED'
export const STATEMENT_REJECTED = 'SKIPPR_PG_REJECTED'
export const RESERVED_NAME = 'SKIPPR_PG_RESERVED_NAME'
export const NAME_TOO_LONG = 'SKIPPR_PG_NAME_TOO_LONG'

/** The fields PostgreSQL sends with an error (pg's DatabaseError), kept for logs and diagnosis. */
export interface ServerFields {
  readonly sqlState: string | undefined
  readonly detail: string | undefined
  readonly hint: string | undefined
  readonly position: string | undefined
  readonly where: string | undefined
  readonly column: string | undefined
  readonly constraint: string | undefined
}

/** A sink error that carries the server's fields when PostgreSQL sent them. */
export class PostgresSinkError extends SkipprError implements ServerFields {
  readonly sqlState: string | undefined
  readonly detail: string | undefined
  readonly hint: string | undefined
  readonly position: string | undefined
  readonly where: string | undefined
  readonly column: string | undefined
  readonly constraint: string | undefined
  constructor(code: string, message: string, cause?: unknown) {
    super(code, message, cause === undefined ? undefined : { cause })
    const fields = serverFields(cause)
    this.sqlState = fields.sqlState
    this.detail = fields.detail
    this.hint = fields.hint
    this.position = fields.position
    this.where = fields.where
    this.column = fields.column
    this.constraint = fields.constraint
  }
}

/** The server could not be reached or the connection broke: retry later. */
export class UnavailableError extends PostgresSinkError {
  constructor(target: string, cause: unknown) {
    super(
      UNAVAILABLE,
      `cannot reach PostgreSQL at ${target}: ${messageOf(cause)}; the batch stays in the WAL and is retried ` +
        'once the server is reachable',
      cause,
    )
  }
}

/** A serialization failure, deadlock, lock timeout, shutdown or exhausted resource: retry later. */
export class TransientError extends PostgresSinkError {
  constructor(table: string, cause: unknown) {
    super(TRANSIENT, `writing ${table} failed for now: ${describe(cause)}; the batch is retried`, cause)
  }
}

/** A value or a constraint was refused (SQLSTATE class 22 or 23): this batch can never land. */
export class DataRejectedError extends PostgresSinkError {
  constructor(table: string, cause: unknown) {
    super(
      DATA_REJECTED,
      `PostgreSQL rejected the rows for table ${table}: ${describe(cause)}; nothing of the batch was written. ` +
        'Fix the source data or the column type (or drop the constraint) and run again',
      cause,
    )
  }
}

export class PermissionDeniedError extends PostgresSinkError {
  constructor(table: string, cause: unknown) {
    super(
      PERMISSION_DENIED,
      `PostgreSQL refused access to ${table}: ${describe(cause)}; grant the user CREATE on the schema and ` +
        'INSERT and SELECT on its tables',
      cause,
    )
  }
}

/** Any other refusal of a statement (bad credentials, missing database, invalid name). */
export class StatementRejectedError extends PostgresSinkError {
  constructor(table: string, cause: unknown) {
    super(
      STATEMENT_REJECTED,
      `PostgreSQL refused the write to ${table}: ${describe(cause)}; check the connection_string, the ` +
        'database and the table',
      cause,
    )
  }
}

/** A newer writer holds the pipeline's lease; this writer must not land anything. */
export class ReservedNameError extends PostgresSinkError {
  constructor(namespace: string) {
    super(
      RESERVED_NAME,
      `namespace ${namespace} clashes with the sink's bookkeeping tables (_skippr_*): rename the source table`,
    )
  }
}

/** A table or column name longer than PostgreSQL keeps (63 bytes). */
export class NameTooLongError extends PostgresSinkError {
  constructor(namespace: string, name: string) {
    super(
      NAME_TOO_LONG,
      `namespace ${namespace}: the name ${JSON.stringify(name)} is ${Buffer.byteLength(name)} bytes, and PostgreSQL keeps ` +
        'only 63 (a longer name would be cut into another, or two into one): shorten it at the source',
    )
  }
}

/**
 * The SQLSTATE of an error the server sent. pg's DatabaseError carries a `severity`; socket errors
 * carry a `code` too (`EPIPE` looks like a SQLSTATE), so the code alone is not enough.
 */
export function sqlStateOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; severity?: unknown } | undefined
  return typeof e?.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)
    ? e.code
    : undefined
}

function serverFields(cause: unknown): ServerFields {
  const c = (typeof cause === 'object' && cause !== null ? cause : {}) as Record<string, unknown>
  const text = (key: string) => (typeof c[key] === 'string' ? (c[key] as string) : undefined)
  return {
    sqlState: sqlStateOf(cause),
    detail: text('detail'),
    hint: text('hint'),
    position: text('position'),
    where: text('where'),
    column: text('column'),
    constraint: text('constraint'),
  }
}

/** The server's message with its SQLSTATE and the COPY line it points at. */
function describe(cause: unknown): string {
  const fields = serverFields(cause)
  // The server's context is one line per frame (a trigger's, then the COPY's): an error is one line.
  const where = fields.where?.replaceAll('\n', '; ')
  const context = [fields.sqlState && `SQLSTATE ${fields.sqlState}`, where].filter(Boolean).join(', ')
  return context ? `${messageOf(cause)} (${context})` : messageOf(cause)
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
