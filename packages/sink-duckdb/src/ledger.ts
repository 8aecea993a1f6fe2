/**
 * The sink's own bookkeeping tables, written in the same transaction as the rows:
 * `_skippr_batches` holds every landed batch identity (so a retry is recognised), and
 * `_skippr_fences` the highest writer-lease token per pipeline (so a deposed writer is refused).
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import type { BatchIdentity } from '@skippr/connector-api'
import { ident } from './sql.js'

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

/**
 * Records `fence` as the pipeline's highest token and returns undefined, or returns the higher
 * token already recorded (the caller must refuse the batch).
 */
export async function claimFence(
  conn: DuckDBConnection,
  dbSchema: string,
  pipeline: string,
  fence: bigint,
): Promise<bigint | undefined> {
  const table = `${ident(dbSchema)}.${FENCES_TABLE}`
  const reader = await conn.runAndReadAll(`SELECT fence FROM ${table} WHERE pipeline = $1`, [pipeline])
  const stored = reader.getRows()[0]?.[0] as bigint | undefined
  if (stored !== undefined && stored > fence) return stored
  if (stored === fence) return undefined
  await conn.run(
    `INSERT INTO ${table} VALUES ($1, $2, now()) ON CONFLICT (pipeline) DO UPDATE SET fence = excluded.fence, updated_at = excluded.updated_at`,
    [pipeline, fence],
  )
  return undefined
}

export async function hasLanded(
  conn: DuckDBConnection,
  dbSchema: string,
  id: BatchIdentity,
): Promise<boolean> {
  const reader = await conn.runAndReadAll(
    `SELECT 1 FROM ${ident(dbSchema)}.${BATCHES_TABLE} WHERE pipeline = $1 AND epoch = $2 AND seq = $3`,
    [id.pipeline, id.epoch, id.seq],
  )
  return reader.currentRowCount > 0
}

export async function recordLanded(
  conn: DuckDBConnection,
  dbSchema: string,
  id: BatchIdentity,
): Promise<void> {
  await conn.run(`INSERT INTO ${ident(dbSchema)}.${BATCHES_TABLE} VALUES ($1, $2, $3, now())`, [
    id.pipeline,
    id.epoch,
    id.seq,
  ])
}
