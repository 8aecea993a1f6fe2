/**
 * The sink's own bookkeeping tables, written in the same transaction as the rows:
 * `_skippr_batches` holds every landed batch identity (so a retry is recognised), and
 * `_skippr_fences` the highest writer-lease token per pipeline (so a deposed writer is refused).
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import type { BatchIdentity } from '@skippr/connector-api'
import { ident, literal } from './sql.js'

export const BATCHES_TABLE = '_skippr_batches'
export const FENCES_TABLE = '_skippr_fences'

export async function ensureLedger(conn: DuckDBConnection, dbSchema: string): Promise<void> {
  const schema = ident(dbSchema)
  await conn.run(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
  await conn.run(
    `CREATE TABLE IF NOT EXISTS ${schema}.${BATCHES_TABLE} (pipeline VARCHAR NOT NULL, epoch VARCHAR NOT NULL, ` +
      'seq BIGINT NOT NULL, landed_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (pipeline, epoch, seq))',
  )
  await conn.run(
    `CREATE TABLE IF NOT EXISTS ${schema}.${FENCES_TABLE} (pipeline VARCHAR PRIMARY KEY, fence BIGINT NOT NULL, ` +
      'updated_at TIMESTAMPTZ NOT NULL)',
  )
}

/** What the ledger holds for a batch: its pipeline's highest fence token, and whether it landed. */
export interface BatchStatus {
  readonly fence: bigint | undefined
  readonly landed: boolean
}

/*
 * The statements below run for every batch, inside its transaction. They carry their values as SQL
 * literals rather than parameters: the node API prepares a statement with parameters in three extra
 * round trips to DuckDB's threads, and while the source is being read each one waits its turn on a
 * busy event loop (about 7 ms per batch with the loop half busy, measured). Every value is a quoted
 * string or a bigint, so the literal is exact.
 */

/** The pipeline's recorded fence and whether `id` landed already, in one query. */
export async function batchStatus(
  conn: DuckDBConnection,
  dbSchema: string,
  id: BatchIdentity,
): Promise<BatchStatus> {
  const schema = ident(dbSchema)
  const result = await conn.run(
    `SELECT (SELECT fence FROM ${schema}.${FENCES_TABLE} WHERE pipeline = ${literal(id.pipeline)}) AS fence, ` +
      `EXISTS (SELECT 1 FROM ${schema}.${BATCHES_TABLE} WHERE pipeline = ${literal(id.pipeline)} ` +
      `AND epoch = ${literal(id.epoch)} AND seq = ${id.seq}) AS landed`,
  )
  const [fence, landed] = result.getChunk(0).getRows()[0] as [bigint | null, boolean]
  return { fence: fence ?? undefined, landed }
}

/** Records `fence` as the pipeline's highest token (the caller checked that none higher is recorded). */
export async function raiseFence(
  conn: DuckDBConnection,
  dbSchema: string,
  pipeline: string,
  fence: bigint,
): Promise<void> {
  await conn.run(
    `INSERT INTO ${ident(dbSchema)}.${FENCES_TABLE} VALUES (${literal(pipeline)}, ${fence}, now()) ` +
      'ON CONFLICT (pipeline) DO UPDATE SET fence = excluded.fence, updated_at = excluded.updated_at',
  )
}

export async function recordLanded(
  conn: DuckDBConnection,
  dbSchema: string,
  id: BatchIdentity,
): Promise<void> {
  await conn.run(
    `INSERT INTO ${ident(dbSchema)}.${BATCHES_TABLE} VALUES ` +
      `(${literal(id.pipeline)}, ${literal(id.epoch)}, ${id.seq}, now())`,
  )
}
