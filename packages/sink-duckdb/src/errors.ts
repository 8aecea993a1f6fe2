import { SkipprError } from '@skippr/connector-api'

export const DUCKDB_UNAVAILABLE = 'SKIPPR_DUCKDB_UNAVAILABLE'
export const DUCKDB_REJECTED = 'SKIPPR_DUCKDB_REJECTED'
export const DUCKDB_WRITE_FAILED = 'SKIPPR_DUCKDB_WRITE_FAILED'
export const DUCKDB_FENCED = 'SKIPPR_DUCKDB_FENCED'
export const DUCKDB_SCHEMA_FAILED = 'SKIPPR_DUCKDB_SCHEMA_FAILED'

/** The database file could not be opened: locked by another process, missing permissions, … */
export class DuckdbUnavailableError extends SkipprError {
  constructor(file: string, cause: unknown) {
    super(
      DUCKDB_UNAVAILABLE,
      `cannot open DuckDB file ${file}: ${firstParagraph(cause)}; ` +
        'close other programs using it (only one process may write a DuckDB file) and check its permissions',
      { cause },
    )
  }
}

/** DuckDB refused the rows (a value that cannot be cast, …): this batch can never land as it is. */
export class DuckdbRejectedError extends SkipprError {
  constructor(table: string, cause: unknown) {
    super(
      DUCKDB_REJECTED,
      `DuckDB rejected the rows for table ${table}: ${firstParagraph(cause)}; ` +
        'fix the source data or widen the column, nothing of this batch was written',
      { cause },
    )
  }
}

/** A failure that may pass (a write conflict, disk full, I/O): the batch is retried. */
export class DuckdbWriteError extends SkipprError {
  /** `what`: the table (`table "main"."x"`) or the batch (`batch p/e/000000000001`). */
  constructor(what: string, cause: unknown) {
    super(
      DUCKDB_WRITE_FAILED,
      `writing ${what} to DuckDB failed: ${firstParagraph(cause)}; the batch will be retried (if it did land, the retry finds it and skips it)`,
      { cause },
    )
  }
}

/** A writer with an older lease tried to land a batch after a newer writer did. */
export class DuckdbFencedError extends SkipprError {
  constructor(pipeline: string, token: bigint, highest: bigint) {
    super(
      DUCKDB_FENCED,
      `pipeline ${pipeline}: fence token ${token} is older than ${highest}, which already wrote to DuckDB; ` +
        'another skipprd holds the pipeline, stop this one',
    )
  }
}

/** Creating or evolving a table failed. */
export class DuckdbSchemaError extends SkipprError {
  constructor(table: string, cause: unknown) {
    super(
      DUCKDB_SCHEMA_FAILED,
      `cannot create or evolve table ${table} in DuckDB: ${firstParagraph(cause)}`,
      { cause },
    )
  }
}

/** DuckDB messages end in pages of hints written for interactive users; the first paragraph says what happened. */
function firstParagraph(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return (message.split('\n\n')[0] ?? message).replaceAll('\n', ' ').trim()
}
