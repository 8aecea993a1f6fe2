/**
 * Creates a namespace's table and evolves it: new fields become new columns, a column a user
 * renamed (`Field.formerNames`) is renamed, a column's type only ever widens (`widenFieldType`), so data already landed is never narrowed.
 *
 * The schema's primary key is not declared: DuckDB keeps an index per key, which slows bulk loads
 * and blocks ALTER COLUMN TYPE, and a source that repeats a key (an updated row) would make the
 * whole batch fail forever. Batches never land twice thanks to the batch identity instead.
 */
import type { DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api'
import type { NamespaceSchema } from '@skippr/connector-api'
import { formerColumn, widenFieldType } from '@skippr/connector-api'
import { columnType, fieldTypeOf, ident, literal } from './sql.js'
import { BEGIN, rollBack } from './transaction.js'

export function tableName(dbSchema: string, namespace: string): string {
  return `${ident(dbSchema)}.${ident(namespace)}`
}

/** In one transaction of two round trips, unless a column must be added or widened. */
export async function ensureTable(
  conn: DuckDBConnection,
  dbSchema: string,
  schema: NamespaceSchema,
): Promise<void> {
  const table = tableName(dbSchema, schema.namespace)
  const columns = schema.fields.map((f) => `${ident(f.name)} ${columnType(f.type)}`).join(', ')
  try {
    // Literal values, as in ledger.ts: a parameterised statement costs three more round trips.
    const existing = await conn.run(
      `${BEGIN}CREATE TABLE IF NOT EXISTS ${table} (${columns}); ` +
        'SELECT column_name, data_type FROM duckdb_columns() ' +
        `WHERE schema_name = ${literal(dbSchema)} AND table_name = ${literal(schema.namespace)}`,
    )
    for (const statement of evolution(table, schema, columnTypes(existing))) await conn.run(statement)
    await conn.run('COMMIT')
  } catch (error) {
    await rollBack(conn, error)
  }
}

/** The ALTER statements that give `table` every field of `schema`, each column at least as wide. */
function evolution(table: string, schema: NamespaceSchema, existing: Map<string, string>): string[] {
  const statements: string[] = []
  for (const field of schema.fields) {
    // DuckDB identifiers are case-insensitive even when quoted.
    const former = formerColumn(field, (name) => existing.has(name.toLowerCase()))
    if (former !== undefined) {
      statements.push(`ALTER TABLE ${table} RENAME COLUMN ${ident(former)} TO ${ident(field.name)}`)
      existing.set(field.name.toLowerCase(), existing.get(former.toLowerCase()) as string)
      existing.delete(former.toLowerCase())
    }
    const dataType = existing.get(field.name.toLowerCase())
    if (dataType === undefined) {
      statements.push(`ALTER TABLE ${table} ADD COLUMN ${ident(field.name)} ${columnType(field.type)}`)
      continue
    }
    const current = fieldTypeOf(dataType)
    if (current === undefined) continue
    const wider = widenFieldType(current, field.type)
    if (wider !== current)
      statements.push(`ALTER TABLE ${table} ALTER ${ident(field.name)} TYPE ${columnType(wider)}`)
  }
  return statements
}

function columnTypes(result: DuckDBMaterializedResult): Map<string, string> {
  const rows = Array.from({ length: result.chunkCount }, (_, i) => result.getChunk(i).getRows()).flat()
  return new Map(rows.map(([name, type]) => [String(name).toLowerCase(), String(type)]))
}
