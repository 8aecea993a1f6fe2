import { SkipprError } from '@skippr/connector-api'

export const UNAVAILABLE = 'SKIPPR_CH_UNAVAILABLE'
export const TRANSIENT = 'SKIPPR_CH_TRANSIENT'
export const AUTHENTICATION_FAILED = 'SKIPPR_CH_AUTHENTICATION_FAILED'
export const PERMISSION_DENIED = 'SKIPPR_CH_PERMISSION_DENIED'
export const DATA_REJECTED = 'SKIPPR_CH_DATA_REJECTED'
export const STATEMENT_REJECTED = 'SKIPPR_CH_REJECTED'
export const NO_PRIMARY_KEY = 'SKIPPR_CH_NO_PRIMARY_KEY'
export const RESERVED_NAME = 'SKIPPR_CH_RESERVED_NAME'
export const UNSUPPORTED_COLUMN = 'SKIPPR_CH_UNSUPPORTED_COLUMN'
/** Refused-row codes (sink.ts `RefusedRow.code`): a value its column cannot hold; a record that cannot be read. */
export const VALUE_REFUSED = 'SKIPPR_CH_VALUE'
export const RECORD_REFUSED = 'SKIPPR_CH_RECORD'

/** A sink error with the server's error code (`Code: 193` → 193) when ClickHouse sent one. */
export class ClickhouseSinkError extends SkipprError {
  readonly serverCode: number | undefined
  constructor(code: string, message: string, cause?: unknown) {
    super(code, message, cause === undefined ? undefined : { cause })
    this.serverCode = serverCodeOf(cause)
  }
}

/** The server could not be reached, the connection broke or timed out: retry later. */
export class UnavailableError extends ClickhouseSinkError {
  constructor(target: string, cause: unknown) {
    super(
      UNAVAILABLE,
      `cannot reach ClickHouse at ${target}: ${describe(cause)}; the batch stays in the WAL and is retried once the server is reachable`,
      cause,
    )
  }
}

/** Too many parts, a memory limit, a timeout, a read-only replica, ZooKeeper away: retry later. */
export class TransientError extends ClickhouseSinkError {
  constructor(table: string, cause: unknown) {
    super(TRANSIENT, `writing ${table} failed for now: ${describe(cause)}; the batch is retried`, cause)
  }
}

export class AuthenticationError extends ClickhouseSinkError {
  constructor(target: string, user: string, cause: unknown) {
    super(
      AUTHENTICATION_FAILED,
      `ClickHouse at ${target} refused the login of user ${user}: ${describe(cause)}; check the sink's username and password`,
      cause,
    )
  }
}

export class PermissionDeniedError extends ClickhouseSinkError {
  constructor(target: string, table: string, cause: unknown) {
    super(
      PERMISSION_DENIED,
      `ClickHouse at ${target} refused access to ${table}: ${describe(cause)}; let the user create the database ` +
        'and its tables, alter, insert into and select from them (a readonly profile cannot)',
      cause,
    )
  }
}

/** The server could not read the rows sent for a table (a parse or type error): this batch cannot land. */
export class DataRejectedError extends ClickhouseSinkError {
  constructor(table: string, cause: unknown) {
    super(
      DATA_REJECTED,
      `ClickHouse rejected the rows for table ${table}: ${describe(cause)}; parts of the batch before it may ` +
        'have landed; check that the column types are the ones this sink creates',
      cause,
    )
  }
}

/** Any other refusal of a statement (unknown database or table, a key column that cannot change). */
export class StatementRejectedError extends ClickhouseSinkError {
  constructor(target: string, table: string, cause: unknown) {
    super(
      STATEMENT_REJECTED,
      `ClickHouse at ${target} refused a statement on ${table}: ${describe(cause)}; check the database, the table and the sink's engine settings`,
      cause,
    )
  }
}

export class NoPrimaryKeyError extends ClickhouseSinkError {
  constructor(namespace: string, engine: string) {
    super(
      NO_PRIMARY_KEY,
      `namespace ${namespace} has no primary key, and the ${engine} engine replaces rows by it: give the ` +
        'source table a primary key, or use the MergeTree or ReplicatedMergeTree engine',
    )
  }
}

export class ReservedNameError extends ClickhouseSinkError {
  constructor(namespace: string, name: string) {
    super(
      RESERVED_NAME,
      `namespace ${namespace}: the name ${JSON.stringify(name)} clashes with the sink's bookkeeping (the _skippr_batches ` +
        'table, the _skippr_batch column): rename it at the source',
    )
  }
}

/** An existing column of a type this sink does not write (created by hand, or by another tool). */
export class UnsupportedColumnError extends ClickhouseSinkError {
  constructor(table: string, column: string, type: string) {
    super(
      UNSUPPORTED_COLUMN,
      `column ${JSON.stringify(column)} of ${table} has the type ${type}, which this sink does not write exactly: ` +
        'change it to the type the sink creates (README, Types) or drop the table',
    )
  }
}

/** The error code in a ClickHouse error: `Code: 193, e.displayText() = …` (18.16) or `Code: 516. DB::Exception: …`. */
export function serverCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code === 'string' && /^\d+$/.test(code)) return Number(code)
  const match = /^Code: (\d+)[.,]/.exec(messageOf(error))
  return match ? Number(match[1]) : undefined
}

/** The server's message as one line, without its `e.displayText() = DB::Exception:` wrapping. */
function describe(error: unknown): string {
  const message = messageOf(error)
    .replace(/e\.displayText\(\) = DB::Exception: /, '')
    .replace(/\s*, e\.what\(\) = DB::Exception\s*$/, '')
    .replace(/DB::Exception: /, '')
  return message.replace(/\s*\n\s*/g, ' ').trim()
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
