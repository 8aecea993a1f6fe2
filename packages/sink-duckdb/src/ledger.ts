/**
 * The sink's own bookkeeping tables, written in the same transaction as the rows:
 * `_skippr_batches` holds every landed batch identity (so a retry is recognised), and
 * `_skippr_fences` the highest writer-lease token per pipeline (so a deposed writer is refused).
 */
import type { DuckDBMaterializedResult } from '@duckdb/node-api'
import type { BatchIdentity } from '@skippr/connector-api'
import { BATCHES_TABLE, FENCES_TABLE } from '@skippr/connector-api'
import { ident, literal } from './sql.js'

/** Creates the bookkeeping tables if missing: statements for the caller's transaction. */
export function ledgerTablesSql(dbSchema: string): string {
  const schema = ident(dbSchema)
  return [
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    `CREATE TABLE IF NOT EXISTS ${schema}.${BATCHES_TABLE} (pipeline VARCHAR NOT NULL, epoch VARCHAR NOT NULL, ` +
      'seq BIGINT NOT NULL, landed_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (pipeline, epoch, seq))',
    `CREATE TABLE IF NOT EXISTS ${schema}.${FENCES_TABLE} (pipeline VARCHAR PRIMARY KEY, fence BIGINT NOT NULL, ` +
      'updated_at TIMESTAMPTZ NOT NULL)',
  ].join('; ')
}

/** What the ledger holds for a batch: its pipeline's highest fence token, and whether it landed. */
export interface BatchStatus {
  readonly fence: bigint | undefined
  readonly landed: boolean
}

/*
 * The statements below run for every landing, inside its transaction. They are SQL text, so the sink
 * can send each in one call with the statements next to it (transaction.ts), and they carry their
 * values as SQL literals rather than parameters: the node API prepares a statement with parameters in
 * three extra round trips to DuckDB's threads. Every value is a quoted string or a bigint, so the
 * literal is exact.
 */

/** Each identity's pipeline fence and whether it landed already, in the order given: one row each. */
export function batchStatusQuery(dbSchema: string, ids: readonly BatchIdentity[]): string {
  const schema = ident(dbSchema)
  const rows = ids.map((id, i) => `(${i}, ${literal(id.pipeline)}, ${literal(id.epoch)}, ${id.seq})`)
  return (
    `SELECT f.fence, b.seq IS NOT NULL AS landed FROM (VALUES ${rows.join(', ')}) AS w(i, pipeline, epoch, seq) ` +
    `LEFT JOIN ${schema}.${FENCES_TABLE} f ON f.pipeline = w.pipeline ` +
    `LEFT JOIN ${schema}.${BATCHES_TABLE} b ON b.pipeline = w.pipeline AND b.epoch = w.epoch AND b.seq = w.seq ` +
    'ORDER BY w.i'
  )
}

/** The rows of `batchStatusQuery`'s result. */
export function batchStatuses(result: DuckDBMaterializedResult, count: number): BatchStatus[] {
  const rows = result.getChunk(0).getRows() as [bigint | null, boolean][]
  if (rows.length !== count)
    throw new Error(`the batch status query gave ${rows.length} rows for ${count} batches`)
  return rows.map(([fence, landed]) => ({ fence: fence ?? undefined, landed }))
}

/** Records `fence` as the pipeline's highest token (the caller checked that none higher is recorded). */
export function raiseFenceSql(dbSchema: string, pipeline: string, fence: bigint): string {
  return (
    `INSERT INTO ${ident(dbSchema)}.${FENCES_TABLE} VALUES (${literal(pipeline)}, ${fence}, now()) ` +
    'ON CONFLICT (pipeline) DO UPDATE SET fence = excluded.fence, updated_at = excluded.updated_at'
  )
}

export function recordLandedSql(dbSchema: string, ids: readonly BatchIdentity[]): string {
  const rows = ids.map((id) => `(${literal(id.pipeline)}, ${literal(id.epoch)}, ${id.seq}, now())`)
  return `INSERT INTO ${ident(dbSchema)}.${BATCHES_TABLE} VALUES ${rows.join(', ')}`
}
