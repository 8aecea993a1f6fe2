/**
 * COPY INTO of one staged part. JSON lines are matched to columns by name
 * (MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE); the contract's CSV has no header line, so its fields
 * go to the named columns in order. An unquoted empty CSV field is NULL, `""` the empty string.
 * ON_ERROR = ABORT_STATEMENT: one bad value loads nothing, and the statement fails. PURGE = TRUE: a
 * file loaded is removed from the stage by the COPY itself, no REMOVE needed (one round trip less).
 */
import type { BatchPart, RefusedRow } from '@skippr/connector-api'
import type { Session } from './client.js'
import { codeOf } from './errors.js'
import { ident } from './names.js'
import { stageLiteral } from './stage.js'

const CSV_FORMAT =
  "TYPE = CSV FIELD_OPTIONALLY_ENCLOSED_BY = '\"' EMPTY_FIELD_AS_NULL = TRUE NULL_IF = () ESCAPE_UNENCLOSED_FIELD = NONE COMPRESSION = GZIP"
const JSON_FORMAT = 'TYPE = JSON COMPRESSION = GZIP'

export interface CopyRequest {
  readonly table: string
  /** The table's columns the part's CSV fields go to, in order (unused for JSON lines). */
  readonly columns: readonly string[]
  readonly location: string
  readonly format: BatchPart['format']
}

function copyStatement(request: CopyRequest, tail: string): string {
  if (request.format === 'csv')
    return `COPY INTO ${request.table} (${request.columns.map(ident).join(', ')}) FROM ${stageLiteral(request.location)} FILE_FORMAT = (${CSV_FORMAT}) ${tail}`
  return `COPY INTO ${request.table} FROM ${stageLiteral(request.location)} FILE_FORMAT = (${JSON_FORMAT}) MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE ${tail}`
}

/** Copies the staged part; answers the rows loaded (0 when Snowflake skipped a file it loaded before). */
export async function copyPart(session: Session, request: CopyRequest): Promise<number> {
  const rows = await session.run(copyStatement(request, 'ON_ERROR = ABORT_STATEMENT PURGE = TRUE'))
  return rows.reduce((sum, row) => sum + Number(row.rows_loaded ?? row.ROWS_LOADED ?? 0), 0)
}

/** Whether a COPY failed for the values it read (Snowflake's data errors: 100xxx, SQL state 22xxx). */
export function refusesValues(error: unknown): boolean {
  const sqlState = String((error as { sqlState?: unknown } | undefined)?.sqlState ?? '')
  return codeOf(error).startsWith('100') && sqlState.startsWith('22')
}

/** Every value of the staged part Snowflake refuses, by record (VALIDATION_MODE loads nothing). */
export async function refusedRows(
  session: Session,
  partIndex: number,
  request: CopyRequest,
): Promise<RefusedRow[]> {
  const errors = await session.run(copyStatement(request, 'VALIDATION_MODE = RETURN_ALL_ERRORS'))
  const byRow = new Map<number, RefusedRow>()
  for (const error of errors) {
    const row = Number(error.ROW_NUMBER) - 1
    if (!Number.isInteger(row) || row < 0 || byRow.has(row)) continue
    byRow.set(row, {
      part: partIndex,
      row,
      code: `SNOWFLAKE_${String(error.CODE ?? 'REFUSED')}`,
      error: `${String(error.ERROR ?? 'refused')} (column ${String(error.COLUMN_NAME ?? '?')})`.replace(
        /\s+/g,
        ' ',
      ),
    })
  }
  return [...byRow.values()].sort((a, b) => a.row - b.row)
}
