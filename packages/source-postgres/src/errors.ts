import { SkipprError } from '@skippr/connector-api'

export const SOURCE_UNAVAILABLE = 'SKIPPR_PG_SOURCE_UNAVAILABLE'
export const TABLE_NOT_FOUND = 'SKIPPR_PG_SOURCE_TABLE_NOT_FOUND'
export const CURSOR_NOT_FOUND = 'SKIPPR_PG_SOURCE_CURSOR_NOT_FOUND'
export const NO_KEY = 'SKIPPR_PG_SOURCE_NO_KEY'
export const OFFSET_INVALID = 'SKIPPR_PG_SOURCE_OFFSET_INVALID'
export const QUERY_FAILED = 'SKIPPR_PG_SOURCE_QUERY_FAILED'

/** The server could not be reached, or the connection broke. The next run resumes from the offset. */
export class SourceUnavailableError extends SkipprError {
  constructor(target: string, options: { cause: unknown }) {
    super(
      SOURCE_UNAVAILABLE,
      `cannot reach PostgreSQL at ${target}: ${messageOf(options.cause)}; check that the server is up and ` +
        'connection_string is right (the next run resumes where this one stopped)',
      options,
    )
  }
}

export class TableNotFoundError extends SkipprError {
  constructor(table: string) {
    super(TABLE_NOT_FOUND, `table ${table} does not exist: check the name and schema in tables`)
  }
}

export class CursorNotFoundError extends SkipprError {
  constructor(table: string, cursor: string) {
    super(CURSOR_NOT_FOUND, `table ${table} has no column ${cursor}: set cursor to one of its columns`)
  }
}

export class NoKeyError extends SkipprError {
  constructor(table: string, mode: 'incremental' | 'snapshot') {
    super(
      NO_KEY,
      mode === 'snapshot'
        ? `table ${table} has no primary key: snapshot mode pages through a table by its primary key; add one, ` +
            'or read the table incrementally with a cursor column'
        : `table ${table} has no primary key and no cursor: set cursor to a column that only grows ` +
            '(a serial id or updated_at), or add a primary key',
    )
  }
}

export class OffsetInvalidError extends SkipprError {
  constructor(detail: string) {
    super(
      OFFSET_INVALID,
      `the saved Postgres source position cannot be used: ${detail}; restore the previous tables config, ` +
        'or reset the pipeline to read the tables again from the start',
    )
  }
}

/** PostgreSQL refused a query; the server's fields (SQLSTATE, detail, hint) are kept. */
export class QueryFailedError extends SkipprError {
  readonly sqlState: string | undefined
  readonly detail: string | undefined
  readonly hint: string | undefined
  constructor(table: string, cause: unknown) {
    const fields = cause as { code?: unknown; detail?: unknown; hint?: unknown }
    const sqlState = typeof fields.code === 'string' ? fields.code : undefined
    super(
      QUERY_FAILED,
      `reading table ${table} failed: ${messageOf(cause)}${sqlState ? ` (SQLSTATE ${sqlState})` : ''}; ` +
        'check that the user may SELECT from it',
      { cause },
    )
    this.sqlState = sqlState
    this.detail = typeof fields.detail === 'string' ? fields.detail : undefined
    this.hint = typeof fields.hint === 'string' ? fields.hint : undefined
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
