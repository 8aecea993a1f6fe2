/**
 * The sink's transactions take as few round trips as their statements allow: BEGIN goes in one call
 * with the first statement and COMMIT with the last (several statements in one call run in order and
 * stop at the first error). Each round trip to DuckDB's threads waits its turn on the event loop, which
 * the source keeps busy while a sync reads; at 10–40 ms a turn on a slow machine, the calls saved are
 * time DuckDB's threads would otherwise wait.
 */
import type { DuckDBConnection } from '@duckdb/node-api'

/** Prefix of a transaction's first call. */
export const BEGIN = 'BEGIN TRANSACTION; '

/** Rolls back the failed transaction and rethrows its error. */
export async function rollBack(conn: DuckDBConnection, error: unknown): Promise<never> {
  // After a failed COMMIT no transaction is left to roll back, and the first error is the one to report.
  await conn.run('ROLLBACK').catch(() => {})
  throw error
}
