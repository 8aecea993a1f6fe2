/**
 * Creates a namespace's table and evolves it: new fields become new columns, a column's type only
 * ever widens (`widenFieldType`), so data already landed is never narrowed.
 *
 * The schema's primary key is not declared: DuckDB keeps an index per key, which slows bulk loads
 * and blocks ALTER COLUMN TYPE, and a source that repeats a key (an updated row) would make the
 * whole batch fail forever. Batches never land twice thanks to the batch identity instead.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import type { NamespaceSchema } from '@skippr/connector-api'
import { widenFieldType } from '@skippr/connector-api'
import { columnType, fieldTypeOf, ident, literal } from './sql.js'

export function tableName(dbSchema: string, namespace: string): string {
  return `${ident(dbSchema)}.${ident(namespace)}`
}

/** Runs inside the caller's transaction. */
export async function ensureTable(
  conn: DuckDBConnection,
  dbSchema: string,
  schema: NamespaceSchema,
): Promise<void> {
  const table = tableName(dbSchema, schema.namespace)
  const columns = schema.fields.map((f) => `${ident(f.name)} ${columnType(f.type)}`).join(', ')
  await conn.run(`CREATE TABLE IF NOT EXISTS ${table} (${columns})`)
  const existing = await existingColumns(conn, dbSchema, schema.namespace)
  for (const field of schema.fields) {
    // DuckDB identifiers are case-insensitive even when quoted.
    const dataType = existing.get(field.name.toLowerCase())
    if (dataType === undefined) {
      await conn.run(`ALTER TABLE ${table} ADD COLUMN ${ident(field.name)} ${columnType(field.type)}`)
      continue
    }
    const current = fieldTypeOf(dataType)
    if (current === undefined) continue
    const wider = widenFieldType(current, field.type)
    if (wider !== current)
      await conn.run(`ALTER TABLE ${table} ALTER ${ident(field.name)} TYPE ${columnType(wider)}`)
  }
}

async function existingColumns(
  conn: DuckDBConnection,
  dbSchema: string,
  table: string,
): Promise<Map<string, string>> {
  // Literal values, as in ledger.ts: a parameterised statement costs three more round trips.
  const reader = await conn.runAndReadAll(
    'SELECT column_name, data_type FROM duckdb_columns() ' +
      `WHERE schema_name = ${literal(dbSchema)} AND table_name = ${literal(table)}`,
  )
  return new Map(reader.getRows().map(([name, type]) => [String(name).toLowerCase(), String(type)]))
}
