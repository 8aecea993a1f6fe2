/**
 * Looking at the database without changing it, for `check`, `count` and `duplicates`. A sink that
 * has not opened the file opens it read-only in an instance of its own and closes it again, so
 * nothing is created, and a process that holds the file (DuckDB lets one at a time open it) makes
 * the look fail, never wait.
 */
import { access, constants, stat } from 'node:fs/promises'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import { type DuckDBInstance, duckdbApi } from './duckdb.js'
import { DuckdbReadError, DuckdbUnavailableError } from './errors.js'
import { ident, literal } from './sql.js'
import { tableName } from './tables.js'

/** The file's size, or undefined when there is none yet (the first write creates it). */
async function sizeOf(file: string): Promise<number | undefined> {
  return stat(file).then(
    (found) => found.size,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw new DuckdbUnavailableError(file, error)
    },
  )
}

/** Runs `work` on a read-only connection to `file`; `absent` when the file holds no database yet. */
export async function readOnly<T>(
  file: string,
  absent: T,
  work: (conn: DuckDBConnection) => Promise<T>,
): Promise<T> {
  if (!(await sizeOf(file))) return absent
  let instance: DuckDBInstance
  let conn: DuckDBConnection
  try {
    instance = await duckdbApi().DuckDBInstance.create(file, { access_mode: 'READ_ONLY' })
  } catch (error) {
    throw new DuckdbUnavailableError(file, error)
  }
  try {
    conn = await instance.connect()
  } catch (error) {
    instance.closeSync()
    throw new DuckdbUnavailableError(file, error)
  }
  try {
    return await work(conn)
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}

/** The file opens, or, before the first write, the nearest existing directory on its way takes one. */
export async function checkFile(file: string): Promise<void> {
  if (await sizeOf(file)) return readOnly(file, undefined, async () => undefined)
  let dir = path.dirname(file)
  while ((await stat(dir).catch(() => undefined)) === undefined && path.dirname(dir) !== dir)
    dir = path.dirname(dir)
  await access(dir, constants.W_OK).catch((error: unknown) => {
    throw new DuckdbUnavailableError(file, error)
  })
}

/** The number `sql` gives for the namespace's table; 0 when the table does not exist. */
export async function countInTable(
  conn: DuckDBConnection,
  dbSchema: string,
  namespace: string,
  sql: (table: string) => string,
): Promise<number> {
  const table = tableName(dbSchema, namespace)
  try {
    // DuckDB identifiers are case-insensitive even when quoted.
    const found = await conn.runAndReadAll(
      `SELECT count(*) FROM duckdb_tables() WHERE schema_name = ${literal(dbSchema)} AND lower(table_name) = lower(${literal(namespace)})`,
    )
    if (Number(found.getRows()[0]?.[0] ?? 0) === 0) return 0
    const result = await conn.runAndReadAll(sql(table))
    return Number(result.getRows()[0]?.[0] ?? 0)
  } catch (error) {
    throw new DuckdbReadError(table, error)
  }
}

export function countSql(table: string): string {
  return `SELECT count(*) FROM ${table}`
}

/** Rows beyond the first of each group with the same values in `key`. */
export function duplicatesSql(key: readonly string[]): (table: string) => string {
  const columns = key.map(ident).join(', ')
  return (table) =>
    `SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT ${columns} FROM ${table})) FROM ${table}`
}
