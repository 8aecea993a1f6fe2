/**
 * The ledger `_skippr_batches`: one row per landed batch, written after its last part. A retry
 * that finds its row writes nothing; only a crash between the last part's insert and the ledger's
 * insert leaves a landed batch without one (README, Guarantee).
 */
import type { BatchIdentity } from '@skippr/connector-api'
import type { Connection } from './connection.js'
import { BATCHES_TABLE } from './ddl.js'
import { qualifiedName, quoteString } from './sql.js'

export async function hasLanded(
  connection: Connection,
  database: string,
  id: BatchIdentity,
): Promise<boolean> {
  const rows = await connection.rows<{ n: number }>(
    `SELECT count() AS n FROM ${qualifiedName(database, BATCHES_TABLE)} WHERE ${matches(id)}`,
  )
  return Number(rows[0]?.n) > 0
}

/**
 * A replicated ledger would drop the row of a batch landed again as a repeated block (the one its
 * first landing inserted, when `landed_at` is the same second), leaving the batch unrecorded; the
 * ledger row is inserted without block deduplication, and a second row for a batch is harmless.
 */
export async function recordLanded(
  connection: Connection,
  database: string,
  id: BatchIdentity,
): Promise<void> {
  await connection.command(
    `INSERT INTO ${qualifiedName(database, BATCHES_TABLE)} (pipeline, epoch, seq)
     VALUES (${quoteString(id.pipeline)}, ${quoteString(id.epoch)}, ${id.seq})`,
    { insert_deduplicate: 0 },
  )
}

function matches(id: BatchIdentity): string {
  return `pipeline = ${quoteString(id.pipeline)} AND epoch = ${quoteString(id.epoch)} AND seq = ${id.seq}`
}
