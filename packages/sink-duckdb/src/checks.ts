/**
 * The checks of the refused-row search's first pass (diagnose.ts): one scan of a part's records,
 * read with their index, that returns each record the load would refuse (the first check it fails,
 * and the value that check names) and each expected index that did not come back at all. A check
 * holds exactly where the load fails: the load's own cast, with TRY_CAST; a column's type changed
 * by hand; a NULL in a NOT NULL column.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import type { Field } from '@skippr/connector-api'
import type { LoadFiles } from './load.js'
import { cannotHold, fieldTypeOf, ident, literal } from './sql.js'

/** A record of a part that DuckDB refuses: its index, and why in one line. */
export interface Refusal {
  readonly row: number
  readonly error: string
  /** The DuckDB error type the load raises for it. */
  readonly code: string
}

/** A table column as the INSERT casts into it. */
export interface TableColumn {
  readonly dataType: string
  readonly nullable: boolean
}

/** What a pass needs: the connection, somewhere to write its files, and the table. */
export interface Diagnosis {
  readonly conn: DuckDBConnection
  readonly files: LoadFiles
  /** The quoted table name, for messages. */
  readonly table: string
  /** The table's columns by lower-case name (DuckDB's identifiers ignore case). */
  readonly columns: ReadonlyMap<string, TableColumn>
}

/** How much of a value a message quotes. */
const VALUE_EXCERPT = 120

/** The table's columns by lower-case name, as the INSERT casts into them. */
export async function tableColumns(
  conn: DuckDBConnection,
  dbSchema: string,
  namespace: string,
): Promise<Map<string, TableColumn>> {
  const rows = await query(
    conn,
    'SELECT column_name, data_type, is_nullable FROM duckdb_columns() ' +
      `WHERE schema_name = ${literal(dbSchema)} AND table_name = ${literal(namespace)}`,
  )
  return new Map(
    rows.map(([name, dataType, nullable]) => [
      String(name).toLowerCase(),
      { dataType: String(dataType), nullable: Boolean(nullable) },
    ]),
  )
}

/** A condition under which the load refuses a record, the value it names, and what it says. */
export interface Check {
  readonly when: string
  readonly value: string
  readonly refusal: (value: string | null) => { error: string; code: string }
}

/** A field as the pass reads it. */
export interface FieldRead {
  /** Its column as read. */
  readonly raw: string
  /** What the load makes of it: NULL where the load's cast fails, when `converts`. */
  readonly value: string
  readonly converts: boolean
  /** `raw` as text, for messages. */
  readonly text: string
}

/** The checks of one field, in the order the load meets them. */
export function fieldChecks(
  diagnosis: Diagnosis,
  field: Field,
  { raw, value, converts, text }: FieldRead,
): Check[] {
  const checks: Check[] = []
  if (converts)
    checks.push({
      when: `${raw} IS NOT NULL AND ${value} IS NULL`,
      value: text,
      refusal: (v) => ({ error: cannotHold(field, excerpt(v)), code: 'Conversion' }),
    })
  const column = diagnosis.columns.get(field.name.toLowerCase())
  if (column === undefined) return checks
  if (fieldTypeOf(column.dataType) !== field.type)
    checks.push({
      when: `${value} IS NOT NULL AND TRY_CAST(${value} AS ${column.dataType}) IS NULL`,
      value: `CAST(${value} AS VARCHAR)`,
      refusal: (v) => ({ error: cannotHold(field, excerpt(v), column.dataType), code: 'Conversion' }),
    })
  if (!column.nullable)
    checks.push({
      when: `${value} IS NULL`,
      value: 'NULL',
      refusal: () => ({
        error: `column ${ident(field.name)} is NOT NULL, and the record has no value for it`,
        code: 'Constraint',
      }),
    })
  return checks
}

/**
 * One scan of `from`: each record failing a check (its index, the first check it fails, the value
 * that check names), then each of `expected` (a table function of indexes) that did not come back.
 * `columns` are every field's column as read: DuckDB reads (and converts) only the columns a query
 * uses, and the load uses them all.
 */
export function checkSql(
  index: string,
  columns: readonly string[],
  from: string,
  checks: readonly Check[],
  expected: string,
): string {
  const pick = (what: (check: Check, k: number) => string | number) =>
    checks.length === 0
      ? 'NULL'
      : `CASE ${checks.map((c, k) => `WHEN ${c.when} THEN ${what(c, k)}`).join(' ')} END`
  // Never true, but not known to be false before the columns are read.
  const readAll = columns.length > 0 ? `row(${columns.join(', ')}) IS NULL` : 'false'
  return (
    `WITH r AS MATERIALIZED (SELECT ${index} AS i, ${pick((_, k) => k)} AS k, ${pick((c) => c.value)} AS v, ` +
    `${readAll} AS n FROM ${from}) SELECT i, k, v FROM r WHERE k IS NOT NULL OR n ` +
    `UNION ALL SELECT t.i, NULL, NULL FROM ${expected} t(i) ANTI JOIN r ON r.i = t.i`
  )
}

/** Runs `checkSql`: the records refused, and the expected indexes that did not come back. */
export async function checked(
  conn: DuckDBConnection,
  sql: string,
  checks: readonly Check[],
): Promise<{ refusals: Refusal[]; missing: number[] }> {
  const refusals: Refusal[] = []
  const missing: number[] = []
  for (const [i, k, v] of await query(conn, sql)) {
    const row = Number(i)
    if (k === null) missing.push(row)
    else refusals.push({ row, ...checks[Number(k)]!.refusal(v === null ? null : String(v)) })
  }
  return { refusals, missing }
}

export async function query(conn: DuckDBConnection, sql: string): Promise<unknown[][]> {
  return (await conn.runAndReadAll(sql)).getRows() as unknown[][]
}

function excerpt(value: string | null): string {
  if (value === null) return 'NULL'
  return value.length > VALUE_EXCERPT ? `${value.slice(0, VALUE_EXCERPT)}…` : value
}
