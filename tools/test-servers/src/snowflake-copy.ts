/**
 * COPY INTO of one staged file into a DuckDB table, as the fake Snowflake runs it: CSV by a column
 * list (positional, an unquoted empty field NULL, `""` the empty string), JSON lines by
 * MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE (a VARIANT column takes the value as JSON). Every value is
 * read as text and cast to its column's type; a value that does not cast is an error naming its
 * row and column, as Snowflake's are, and with ON_ERROR = ABORT_STATEMENT nothing loads.
 */
import { randomUUID } from 'node:crypto'
import type { DuckDBConnection } from '@duckdb/node-api'
import { SqlError, snowflakeType } from './snowflake-sql.js'

export interface TableColumn {
  readonly name: string
  readonly duckType: string
}

export interface CopyError {
  /** 1-based record number in the file. */
  readonly row: number
  readonly column: string
  readonly message: string
}

export interface CopyRequest {
  readonly file: string
  readonly fileName: string
  readonly table: string
  /** The table as a DuckDB name (`"DB"."SCHEMA"."T"`). */
  readonly target: string
  readonly tableColumns: readonly TableColumn[]
  /** CSV's column list; undefined: every column of the table, in order. */
  readonly columns: readonly string[] | undefined
  readonly format: 'CSV' | 'JSON'
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`
const quoteText = (text: string) => `'${text.replaceAll("'", "''")}'`

/** Reads the file into a scratch table, finds values that do not cast; loads unless `dryRun`. */
export async function copyFile(
  conn: DuckDBConnection,
  request: CopyRequest,
  dryRun: boolean,
): Promise<{ rows: number; errors: CopyError[] }> {
  const scratch = quoteIdent(`__copy_${randomUUID().replaceAll('-', '')}`)
  const mapping = await stage(conn, request, scratch)
  try {
    const errors: CopyError[] = []
    for (const { column, value } of mapping) {
      const found = await conn.runAndReadAll(
        `SELECT __rn, ${value} FROM ${scratch} WHERE ${value} IS NOT NULL AND TRY_CAST(${value} AS ${column.duckType}) IS NULL ORDER BY __rn`,
      )
      for (const [rn, text] of found.getRows())
        errors.push({
          row: Number(rn),
          column: column.name,
          message: `${/DECIMAL|DOUBLE/.test(column.duckType) ? 'Numeric' : snowflakeType(column.duckType)} value '${String(text)}' is not recognized`,
        })
    }
    errors.sort((a, b) => a.row - b.row)
    const counted = await conn.runAndReadAll(`SELECT count(*) FROM ${scratch}`)
    const rows = Number(counted.getRows()[0]?.[0] ?? 0)
    if (dryRun || errors.length > 0) return { rows, errors }
    if (mapping.length > 0) {
      const names = mapping.map((m) => quoteIdent(m.column.name)).join(', ')
      const values = mapping.map((m) => `CAST(${m.value} AS ${m.column.duckType})`).join(', ')
      await conn.run(
        `INSERT INTO ${request.target} (${names}) SELECT ${values} FROM ${scratch} ORDER BY __rn`,
      )
    } else await conn.run(`INSERT INTO ${request.target} DEFAULT VALUES`)
    return { rows, errors }
  } finally {
    await conn.run(`DROP TABLE IF EXISTS ${scratch}`)
  }
}

/** The file's records in `scratch` (`__rn` and text), and which expression feeds which column. */
async function stage(
  conn: DuckDBConnection,
  request: CopyRequest,
  scratch: string,
): Promise<{ column: TableColumn; value: string }[]> {
  const byName = new Map(request.tableColumns.map((c) => [c.name, c]))
  const file = quoteText(request.file)
  try {
    if (request.format === 'CSV') {
      const names = request.columns ?? request.tableColumns.map((c) => c.name)
      const columns = names.map((name) => {
        const column = byName.get(name)
        if (!column)
          throw new SqlError('000904', '42000', `SQL compilation error: invalid identifier '"${name}"'`)
        return column
      })
      const spec = columns.map((_, i) => `'c${i}': 'VARCHAR'`).join(', ')
      await conn.run(
        `CREATE TEMP TABLE ${scratch} AS SELECT row_number() OVER () AS __rn, * FROM read_csv(${file}, ` +
          `header = false, auto_detect = false, quote = '"', escape = '"', allow_quoted_nulls = false, ` +
          `compression = 'gzip', columns = {${spec}})`,
      )
      return columns.map((column, i) => ({ column, value: `c${i}` }))
    }
    await conn.run(
      `CREATE TEMP TABLE ${scratch} AS SELECT row_number() OVER () AS __rn, json FROM read_ndjson_objects(${file}, compression = 'gzip')`,
    )
    const keys = await conn.runAndReadAll(`SELECT DISTINCT unnest(json_keys(json)) FROM ${scratch}`)
    const byLower = new Map(request.tableColumns.map((c) => [c.name.toLowerCase(), c]))
    const mapping: { column: TableColumn; value: string }[] = []
    for (const [key] of keys.getRows()) {
      const column = byLower.get(String(key).toLowerCase())
      if (!column || mapping.some((m) => m.column === column)) continue
      const pointer = quoteText(`/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`)
      const value =
        column.duckType === 'JSON'
          ? `(CASE WHEN json_type(json_extract(json, ${pointer})) = 'NULL' THEN NULL ELSE json_extract(json, ${pointer}) END)`
          : `json_extract_string(json, ${pointer})`
      mapping.push({ column, value })
    }
    return mapping
  } catch (error) {
    if (error instanceof SqlError) throw error
    throw new SqlError(
      '100069',
      '22000',
      `Error parsing ${request.format} file '${request.fileName}': ${String((error as Error).message).split('\n')[0]}`,
    )
  }
}
