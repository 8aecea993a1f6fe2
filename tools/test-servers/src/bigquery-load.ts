/**
 * The fake BigQuery's load jobs: an uploaded NEWLINE_DELIMITED_JSON or CSV body read by DuckDB's
 * read_json / read_csv into a table, every value converted to its column's type or the job refused
 * with BigQuery's kind of message ("Error while reading data, …" naming the field and the value),
 * one per bad record, and nothing of the body written.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'

export interface LoadColumn {
  readonly name: string
  /** The DuckDB type of the table's column. */
  readonly duckType: string
  /** The BigQuery type name, for messages. */
  readonly bqType: string
}

export type LoadResult =
  | { readonly ok: true; readonly outputRows: number }
  | { readonly ok: false; readonly errors: readonly { message: string; location?: string }[] }

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`
const quoteText = (text: string) => `'${text.replaceAll("'", "''")}'`

/**
 * Reads `body` as `format` into `table` (a quoted DuckDB name) with `columns` (the load's fields, in
 * the CSV's column order), replacing its rows when `truncate`. The caller holds the connection.
 */
export async function loadBody(
  conn: DuckDBConnection,
  table: string,
  columns: readonly LoadColumn[],
  format: 'CSV' | 'NEWLINE_DELIMITED_JSON',
  body: Buffer,
  truncate: boolean,
): Promise<LoadResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fake-bigquery-'))
  const file = path.join(dir, format === 'CSV' ? 'body.csv' : 'body.jsonl')
  try {
    await writeFile(file, body)
    const raw = `__raw_${Math.random().toString(36).slice(2)}`
    try {
      await conn.run(
        `CREATE TEMP TABLE ${raw} AS SELECT row_number() OVER () AS __row, * FROM ${reader(format, file, columns)}`,
      )
    } catch (error) {
      return {
        ok: false,
        errors: [{ message: `Error while reading data, error message: ${firstLine(error)}` }],
      }
    }
    try {
      const converted = columns.map((c, i) => convert(format, `c${i}`, c))
      const errors = await findBadValues(conn, raw, columns, converted)
      if (errors.length > 0) return { ok: false, errors }
      await conn.run('BEGIN TRANSACTION')
      try {
        if (truncate) await conn.run(`DELETE FROM ${table}`)
        const targets = columns.map((c) => quoteIdent(c.name)).join(', ')
        await conn.run(
          `INSERT INTO ${table} (${targets}) SELECT ${converted.join(', ')} FROM ${raw} ORDER BY __row`,
        )
        await conn.run('COMMIT')
      } catch (error) {
        await conn.run('ROLLBACK')
        return {
          ok: false,
          errors: [{ message: `Error while reading data, error message: ${firstLine(error)}` }],
        }
      }
      const counted = await conn.runAndReadAll(`SELECT count(*) FROM ${raw}`)
      return { ok: true, outputRows: Number(counted.getRows()[0]?.[0] ?? 0) }
    } finally {
      await conn.run(`DROP TABLE IF EXISTS ${raw}`)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Every column read under a positional name (`c0`…): as text from CSV, as JSON from JSON lines. */
function reader(
  format: 'CSV' | 'NEWLINE_DELIMITED_JSON',
  file: string,
  columns: readonly LoadColumn[],
): string {
  if (format === 'CSV') {
    const struct = columns.map((_, i) => `'c${i}': 'VARCHAR'`).join(', ')
    return (
      `read_csv(${quoteText(file)}, columns = {${struct}}, header = false, auto_detect = false, ` +
      `delim = ',', quote = '"', escape = '"', new_line = '\\n', allow_quoted_nulls = false)`
    )
  }
  const struct = columns.map((c) => `${quoteText(c.name)}: 'JSON'`).join(', ')
  const named = columns.map((c, i) => `${quoteIdent(c.name)} AS c${i}`).join(', ')
  return `(SELECT ${named} FROM read_json(${quoteText(file)}, format = 'newline_delimited', records = true, columns = {${struct}}))`
}

/** The expression giving `column`'s value in its table type, NULL where it cannot. */
function convert(format: 'CSV' | 'NEWLINE_DELIMITED_JSON', column: string, target: LoadColumn): string {
  if (format === 'CSV')
    return target.duckType === 'VARCHAR' ? column : `TRY_CAST(${column} AS ${target.duckType})`
  const isNull = `(${column} IS NULL OR json_type(${column}) = 'NULL')`
  if (target.duckType === 'JSON') return `CASE WHEN ${isNull} THEN NULL ELSE ${column} END`
  const text = `(${column} ->> '$')`
  return `CASE WHEN ${isNull} THEN NULL ELSE ${target.duckType === 'VARCHAR' ? text : `TRY_CAST(${text} AS ${target.duckType})`} END`
}

/** One error per record holding a value its column cannot take, naming the first such field. */
async function findBadValues(
  conn: DuckDBConnection,
  raw: string,
  columns: readonly LoadColumn[],
  converted: readonly string[],
): Promise<{ message: string; location: string }[]> {
  if (columns.length === 0) return []
  const checks = columns.map((_c, i) => {
    const value = `c${i}`
    return `CASE WHEN ${value} IS NOT NULL AND ${converted[i]} IS NULL THEN ${i} END`
  })
  const found = await conn.runAndReadAll(
    `SELECT __row, coalesce(${checks.join(', ')}) AS bad, * FROM ${raw} WHERE coalesce(${checks.join(', ')}) IS NOT NULL ORDER BY __row`,
  )
  return found.getRowObjectsJS().map((row) => {
    const index = Number(row.bad)
    const column = columns[index] as LoadColumn
    const value = String(row[`c${index}`])
    return {
      location: `row ${Number(row.__row) - 1}`,
      message:
        `Error while reading data, error message: Could not parse '${value}' as ${column.bqType} ` +
        `for field ${column.name} (position ${index}) in row ${Number(row.__row) - 1}`,
    }
  })
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''
}
