/**
 * Tables follow the schemas they receive: created when missing, new columns added, types widened
 * where ClickHouse keeps every value, never narrowed or dropped. The database and the ledger table
 * `_skippr_batches` are created alongside, after a look at the catalog, so that a user without
 * CREATE rights can still write into what exists.
 */
import { BATCH_COLUMN, BATCHES_TABLE, type NamespaceSchema } from '@skippr/connector-api'
import { type Column, columnTypeOf, parseColumn, spell, widens } from './column-types.js'
import { type ClickhouseSinkConfig, isReplacing, isReplicated } from './config.js'
import type { Connection } from './connection.js'
import { NoPrimaryKeyError, ReservedNameError } from './errors.js'
import { qualifiedName, quoteName, quoteString } from './sql.js'

export { BATCHES_TABLE }

/** Settings of `config` that shape tables. */
export type TableConfig = Pick<ClickhouseSinkConfig, 'database' | 'engine' | 'zookeeper_path' | 'replica'>

/** A refusal of the namespace's names or keys that no retry changes; undefined when it can be created. */
export function schemaProblem(schema: NamespaceSchema, config: TableConfig): Error | undefined {
  if (schema.namespace.startsWith('_skippr_'))
    return new ReservedNameError(schema.namespace, schema.namespace)
  if (schema.fields.some((f) => f.name === BATCH_COLUMN))
    return new ReservedNameError(schema.namespace, BATCH_COLUMN)
  if (isReplacing(config.engine) && !schema.primaryKey?.length)
    return new NoPrimaryKeyError(schema.namespace, config.engine)
  return undefined
}

/** Creates the database and the ledger table when missing. */
export async function prepareDatabase(connection: Connection, config: TableConfig): Promise<void> {
  const [found] = await connection.rows<{ database: number; ledger: number }>(
    `SELECT (SELECT count() FROM system.databases WHERE name = ${quoteString(config.database)}) AS database,
            (SELECT count() FROM system.tables WHERE database = ${quoteString(config.database)}
               AND name = ${quoteString(BATCHES_TABLE)}) AS ledger`,
  )
  if (!Number(found?.database))
    await connection.command(`CREATE DATABASE IF NOT EXISTS ${quoteName(config.database)}`)
  if (Number(found?.ledger)) return
  const ledgerEngine = {
    ...config,
    engine: isReplicated(config.engine) ? 'ReplicatedMergeTree' : 'MergeTree',
  } as const
  await connection.command(
    `CREATE TABLE IF NOT EXISTS ${qualifiedName(config.database, BATCHES_TABLE)}
       (pipeline String, epoch String, seq Int64, landed_at DateTime DEFAULT now())
       ENGINE = ${engineClause(ledgerEngine, BATCHES_TABLE)} ORDER BY (pipeline, epoch, seq)`,
  )
}

/** The table's columns, read from `system.columns`; undefined when the table does not exist. */
export async function tableColumns(
  connection: Connection,
  database: string,
  table: string,
): Promise<Column[] | undefined> {
  const rows = await connection.rows<{ name: string; type: string; key: number }>(
    `SELECT name, type, is_in_sorting_key AS key FROM system.columns
      WHERE database = ${quoteString(database)} AND table = ${quoteString(table)}`,
  )
  return rows.length === 0 ? undefined : rows.map((r) => parseColumn(r.name, r.type, Number(r.key) === 1))
}

/** Brings the namespace's table up to `schema`; returns its columns afterwards. */
export async function prepareTable(
  connection: Connection,
  config: TableConfig,
  schema: NamespaceSchema,
): Promise<Column[]> {
  const table = qualifiedName(config.database, schema.namespace)
  const existing = await tableColumns(connection, config.database, schema.namespace)
  if (existing === undefined) {
    const key = new Set(schema.primaryKey ?? [])
    const columns = schema.fields.map(
      (f) => `${quoteName(f.name)} ${spell(columnTypeOf(f.type), !key.has(f.name))}`,
    )
    columns.push(`${quoteName(BATCH_COLUMN)} String`)
    const orderBy = key.size > 0 ? [...key].map(quoteName).join(', ') : quoteName(BATCH_COLUMN)
    await connection.command(
      `CREATE TABLE IF NOT EXISTS ${table} (${columns.join(', ')})
         ENGINE = ${engineClause(config, schema.namespace)} ORDER BY (${orderBy})`,
    )
  } else {
    const changes = alterations(existing, schema)
    if (changes.length === 0) return existing
    await connection.command(`ALTER TABLE ${table} ${changes.join(', ')}`)
  }
  return (await tableColumns(connection, config.database, schema.namespace)) ?? []
}

/**
 * Missing columns added as `Nullable`, and widened types. A key column keeps its type (18.16 allows
 * no ALTER of one that rewrites data); a value it cannot hold is refused when written.
 */
function alterations(existing: readonly Column[], schema: NamespaceSchema): string[] {
  const byName = new Map(existing.map((c) => [c.name, c]))
  const changes: string[] = []
  if (!byName.has(BATCH_COLUMN)) changes.push(`ADD COLUMN ${quoteName(BATCH_COLUMN)} String`)
  for (const field of schema.fields) {
    const wanted = columnTypeOf(field.type)
    const held = byName.get(field.name)
    if (held === undefined) changes.push(`ADD COLUMN ${quoteName(field.name)} ${spell(wanted, true)}`)
    else if (held.type !== undefined && !held.inKey && widens(held.type, wanted))
      changes.push(`MODIFY COLUMN ${quoteName(field.name)} ${spell(wanted, held.nullable)}`)
  }
  return changes
}

/**
 * The ENGINE clause. A replicated table's ZooKeeper path gets the database and table names,
 * percent-encoded so that a `/` or a `{` in a name cannot add a path level or a macro.
 */
function engineClause(config: TableConfig, table: string): string {
  if (!isReplicated(config.engine)) return config.engine
  const path = config.zookeeper_path
    .replaceAll('{database}', encodeURIComponent(config.database))
    .replaceAll('{table}', encodeURIComponent(table))
  return `${config.engine}(${quoteString(path)}, ${quoteString(config.replica)})`
}
