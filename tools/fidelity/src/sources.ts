/**
 * Writes a generated table as each source format and returns the `data_sources` entry that reads
 * it, with what the source holds cell by cell for the comparison.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DuckDBInstance, dateValue, timestampTZValue } from '@duckdb/node-api'
import type { FieldType } from '@skippr/connector-api'
import { postgresDate, postgresTimestamp } from './calendar.js'
import { csvText, type FileCell, type FileStyle, fileCells, jsonLinesText } from './file-formats.js'
import { type Database, envReference } from './postgres.js'
import type { SourceCell, SourceRows } from './source-cells.js'
import { type Column, NAMESPACE, type Table, type Timestamp, type Value } from './table.js'

export const SOURCE_KINDS = ['csv', 'jsonl', 'parquet', 'postgres'] as const
export type SourceKind = (typeof SOURCE_KINDS)[number]

export interface SourceFixture extends SourceRows {
  /** The `data_sources` entry of skippr.yml. */
  readonly entry: Record<string, unknown>
  /** Variables the entry's `${NAME}` references need. */
  readonly env: Record<string, string>
}

const typedRows = (table: Table): SourceCell[][] =>
  table.rows.map((row) =>
    row.map((value, c) => (value === null ? null : { type: (table.columns[c] as Column).type, value })),
  )

/** CSV or JSON lines from fields' texts; `schema` configures the columns instead of inferring them. */
export async function writeFileSource(
  dir: string,
  format: 'csv' | 'jsonl',
  columns: readonly Column[],
  cells: readonly FileCell[][],
  style: FileStyle,
  schema: boolean,
): Promise<SourceFixture> {
  const file = `${NAMESPACE}.${format}`
  const text = format === 'csv' ? csvText(columns, cells, style) : jsonLinesText(columns, cells, style)
  await writeFile(path.join(dir, file), text)
  const fields = columns.map(({ name, type }) => ({ name, type }))
  return {
    entry: { File: { path: file, format, ...(schema ? { schema: fields } : {}) } },
    env: {},
    columns,
    rows: cells.map((row) => row.map((cell) => sourceCell(format, cell))),
  }
}

function sourceCell(format: 'csv' | 'jsonl', cell: FileCell): SourceCell {
  if (cell === null) return null
  if (format === 'csv') return { text: cell.text }
  return { json: cell.raw ? cell.text : JSON.stringify(cell.text) }
}

export const writeTableAsFile = (
  dir: string,
  format: 'csv' | 'jsonl',
  table: Table,
  style: FileStyle,
  schema: boolean,
) => writeFileSource(dir, format, table.columns, fileCells(table, style), style, schema)

const DUCKDB_TYPES: Record<FieldType, string> = {
  string: 'VARCHAR',
  int: 'INTEGER',
  long: 'BIGINT',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMPTZ',
  json: 'VARCHAR',
}

/** A Parquet file written by DuckDB from the exact values (appended, never parsed from text). */
export async function writeParquetSource(dir: string, table: Table): Promise<SourceFixture> {
  const file = `${NAMESPACE}.parquet`
  const instance = await DuckDBInstance.create(':memory:')
  try {
    const connection = await instance.connect()
    try {
      const columns = table.columns.map((c) => `"${c.name}" ${DUCKDB_TYPES[c.type]}`).join(', ')
      await connection.run(`CREATE TABLE staged (${columns})`)
      const appender = await connection.createAppender('staged')
      for (const row of table.rows) {
        row.forEach((value, c) => {
          appendValue(appender, (table.columns[c] as Column).type, value)
        })
        appender.endRow()
      }
      appender.closeSync()
      const select = table.columns
        .map((c) => (c.type === 'json' ? `CAST("${c.name}" AS JSON) AS "${c.name}"` : `"${c.name}"`))
        .join(', ')
      await connection.run(
        `COPY (SELECT ${select} FROM staged) TO '${path.join(dir, file)}' (FORMAT parquet)`,
      )
    } finally {
      connection.closeSync()
    }
  } finally {
    instance.closeSync()
  }
  return {
    entry: { File: { path: file, format: 'parquet' } },
    env: {},
    columns: table.columns,
    rows: typedRows(table),
  }
}

type Appender = Awaited<ReturnType<Awaited<ReturnType<DuckDBInstance['connect']>>['createAppender']>>

function appendValue(appender: Appender, type: FieldType, value: Value | null): void {
  if (value === null) {
    appender.appendNull()
    return
  }
  switch (type) {
    case 'int':
      appender.appendInteger(value as number)
      break
    case 'long':
      appender.appendBigInt(value as bigint)
      break
    case 'double':
      appender.appendDouble(value as number)
      break
    case 'boolean':
      appender.appendBoolean(value as boolean)
      break
    case 'date':
      appender.appendDate(dateValue(value as number))
      break
    case 'timestamp':
      appender.appendTimestampTZ(timestampTZValue(value as bigint))
      break
    case 'json':
      appender.appendVarchar(JSON.stringify(value))
      break
    default:
      appender.appendVarchar(value as string)
  }
}

const POSTGRES_TYPES: Record<FieldType, string> = {
  string: 'text',
  int: 'integer',
  long: 'bigint',
  double: 'double precision',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamptz',
  json: 'jsonb',
}

/** PostgreSQL's input text of a value, so BC, infinity, NaN and −0 go in as they are. */
function postgresText(type: FieldType, value: Value): string {
  switch (type) {
    case 'double': {
      const n = value as number
      return Object.is(n, -0) ? '-0' : Number.isNaN(n) ? 'NaN' : String(n)
    }
    case 'date':
      return postgresDate(value as number)
    case 'timestamp':
      return typeof value === 'string' ? value : postgresTimestamp(value as Exclude<Timestamp, string>)
    case 'json':
      return JSON.stringify(value)
    default:
      return String(value)
  }
}

/** A table `t` (primary key `id`) in its own schema of `database`. */
export async function writePostgresSource(
  database: Database,
  schema: string,
  table: Table,
): Promise<SourceFixture> {
  const columns = table.columns.map(
    (c) => `"${c.name}" ${POSTGRES_TYPES[c.type]}${c.name === 'id' ? ' PRIMARY KEY' : ''}`,
  )
  await database.pool.query(`CREATE SCHEMA "${schema}"`)
  await database.pool.query(`CREATE TABLE "${schema}"."${NAMESPACE}" (${columns.join(', ')})`)
  const names = table.columns.map((c) => `"${c.name}"`).join(', ')
  for (const row of table.rows) {
    const params = row.map((value, c) =>
      value === null ? null : postgresText((table.columns[c] as Column).type, value),
    )
    const placeholders = params.map((_, k) => `$${k + 1}`).join(', ')
    await database.pool.query(
      `INSERT INTO "${schema}"."${NAMESPACE}" (${names}) VALUES (${placeholders})`,
      params,
    )
  }
  return {
    entry: {
      Postgres: {
        connection_string: envReference('FIDELITY_SOURCE_URL'),
        tables: [{ name: NAMESPACE, schema }],
      },
    },
    env: { FIDELITY_SOURCE_URL: database.url },
    columns: table.columns,
    rows: typedRows(table),
  }
}
