/**
 * Keyset pagination over a table's key (cursor, then primary key). A chunk is the key range
 * (after, upto]: `upto` is the key of the batch_rows-th row after `after`, so a chunk holds every
 * row of that range even when the key is not unique (a cursor without a primary key) and ties
 * are never split across chunks.
 */

import pg from 'pg'
import type { Column, TableInfo } from './catalog.js'
import type { Mode } from './config.js'
import { CursorNotFoundError, NoKeyError } from './errors.js'

/** The columns a table is read in the order of. */
export function tableKey(table: TableInfo, mode: Mode): Column[] {
  const byName = new Map(table.columns.map((c) => [c.name, c]))
  const primaryKey = table.primaryKey.map((name) => byName.get(name) as Column)
  const name = `${table.spec.schema}.${table.spec.name}`
  if (mode === 'snapshot') {
    if (primaryKey.length === 0) throw new NoKeyError(name, mode)
    return primaryKey
  }
  const cursorName = table.spec.cursor
  if (cursorName === undefined) {
    if (primaryKey.length === 0) throw new NoKeyError(name, mode)
    return primaryKey
  }
  const cursor = byName.get(cursorName)
  if (!cursor) throw new CursorNotFoundError(name, cursorName)
  return [cursor, ...primaryKey.filter((c) => c.name !== cursorName)]
}

/**
 * The key of the last row of the next chunk, and of the row after it: `LIMIT 2` tells whether the
 * chunk is the last one without a further query.
 */
export function boundSql(
  table: TableInfo,
  key: readonly Column[],
  after: readonly string[] | undefined,
  rows: number,
): string {
  return `SELECT ${keyText(key)} FROM ${table.qualified} WHERE ${rangeSql(table, key, after, undefined)}
    ORDER BY ${keyList(table, key)} OFFSET ${rows - 1} LIMIT 2`
}

/** The key of the table's last row after `after`, when fewer than batch_rows rows remain. */
export function lastKeySql(
  table: TableInfo,
  key: readonly Column[],
  after: readonly string[] | undefined,
): string {
  const descending = key.map((c) => `${column(table, c)} DESC`).join(', ')
  return `SELECT ${keyText(key)} FROM ${table.qualified} WHERE ${rangeSql(table, key, after, undefined)}
    ORDER BY ${descending} LIMIT 1`
}

/** COPY takes no bind parameters, so the bounds are inlined as escaped literals cast to their types. */
export function copySql(
  table: TableInfo,
  key: readonly Column[],
  select: readonly string[],
  after: readonly string[] | undefined,
  upto: readonly string[],
): string {
  return `COPY (SELECT ${select.join(', ')} FROM ${table.qualified} WHERE ${rangeSql(table, key, after, upto)}
    ORDER BY ${keyList(table, key)}) TO STDOUT WITH (FORMAT csv)`
}

function rangeSql(
  table: TableInfo,
  key: readonly Column[],
  after: readonly string[] | undefined,
  upto: readonly string[] | undefined,
): string {
  // A NULL cursor has no place in the order: such rows are never read incrementally.
  const conditions = key.filter((c) => c.nullable).map((c) => `${column(table, c)} IS NOT NULL`)
  if (after) conditions.push(`(${keyList(table, key)}) > (${literals(key, after)})`)
  if (upto) conditions.push(`(${keyList(table, key)}) <= (${literals(key, upto)})`)
  return conditions.length > 0 ? conditions.join(' AND ') : 'true'
}

function keyList(table: TableInfo, key: readonly Column[]): string {
  return key.map((c) => column(table, c)).join(', ')
}

/**
 * Qualified, so ORDER BY sorts by the column and not by a same-named output column (the bound
 * query selects the key as text).
 */
function column(table: TableInfo, c: Column): string {
  return `${table.qualified}.${pg.escapeIdentifier(c.name)}`
}

function keyText(key: readonly Column[]): string {
  return key.map((c) => `${pg.escapeIdentifier(c.name)}::text`).join(', ')
}

function literals(key: readonly Column[], values: readonly string[]): string {
  return key.map((c, i) => `${pg.escapeLiteral(values[i] as string)}::${c.sqlType}`).join(', ')
}
