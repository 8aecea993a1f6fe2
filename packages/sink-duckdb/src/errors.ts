import { SkipprError } from '@skippr/connector-api'

export const DUCKDB_UNAVAILABLE = 'SKIPPR_DUCKDB_UNAVAILABLE'
export const DUCKDB_REJECTED = 'SKIPPR_DUCKDB_REJECTED'
export const DUCKDB_WRITE_FAILED = 'SKIPPR_DUCKDB_WRITE_FAILED'
export const DUCKDB_SCHEMA_FAILED = 'SKIPPR_DUCKDB_SCHEMA_FAILED'
export const DUCKDB_OUT_OF_MEMORY = 'SKIPPR_DUCKDB_OUT_OF_MEMORY'
export const DUCKDB_READ_FAILED = 'SKIPPR_DUCKDB_READ_FAILED'

/**
 * A batch loaded alone ran out of the sink's memory_limit (a row of 10,000 columns): loading it
 * again with the same limit fails the same way, so it is not retried.
 */
export class DuckdbOutOfMemoryError extends SkipprError {
  constructor(batch: string, limit: string, cause: unknown) {
    super(
      DUCKDB_OUT_OF_MEMORY,
      `loading batch ${batch} ran out of DuckDB's memory_limit (${limit}): ${firstParagraph(cause)}; ` +
        'raise memory_limit in the Duckdb sink config (e.g. memory_limit: 2GB), then run sync again',
      { cause },
    )
  }
}

/** DuckDB ran out of its memory_limit. */
export function isOutOfMemory(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause)
    if (/^Out of Memory Error/.test(e.message)) return true
  return false
}

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

/** Counting a table's rows (`count`, `duplicates`) failed: a column changed by hand, I/O. */
export class DuckdbReadError extends SkipprError {
  constructor(table: string, cause: unknown) {
    super(DUCKDB_READ_FAILED, `reading table ${table} from DuckDB failed: ${firstParagraph(cause)}`, {
      cause,
    })
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

/**
 * DuckDB error types that refuse a statement for the data of some of its rows (a value it cannot
 * convert, a constraint), as opposed to the statement itself (Binder, Catalog, Parser): only these
 * send the sink looking for the rows (refusals.ts).
 */
const ROW_ERROR = /^(Conversion|Invalid Input|Constraint|Out of Range) Error/

export function isRowError(error: unknown): boolean {
  return error instanceof Error && ROW_ERROR.test(error.message)
}

/** The DuckDB error type a message starts with: `Conversion` for `Conversion Error: …`. */
export function duckdbErrorType(error: unknown): string | undefined {
  return /^([A-Z][A-Za-z ]*?) Error:/.exec(error instanceof Error ? error.message : '')?.[1]
}

/** DuckDB messages end in pages of hints written for interactive users; the first paragraph says what happened. */
export function firstParagraph(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return (message.split('\n\n')[0] ?? message).replaceAll('\n', ' ').trim()
}
