/**
 * DuckDB keeps every block a load wrote in its buffer pool, cached, until memory_limit forces it out:
 * the sink only appends and never reads them, yet a sync's memory grew with what it landed until
 * DuckDB alone held about memory_limit (8M rows: 107 MB of table blocks; 27M rows: 210 MB). Lowering
 * memory_limit is the one way DuckDB offers to evict unpinned blocks now, so after each landing the
 * sink sets it low and back: the blocks are on disk already, evicting them is only freeing memory.
 * The limit is the instance's: a reader sharing it in this process whose query runs in the same
 * moment (one call of two SET statements) meets the low limit, and may fail for memory.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import { literal } from './sql.js'

/** Low enough to evict every unpinned block; the sink's own tables and indexes need far less at rest. */
const EVICTING_LIMIT = '1MB'

export const memoryLimitSql = (memoryLimit: string): string => `SET memory_limit = ${literal(memoryLimit)}`

/**
 * Drops the blocks DuckDB holds cached, between the sink's transactions, and restores `memoryLimit`.
 * Never throws: DuckDB refuses the low limit if a reader of the same instance pins more (the blocks
 * then stay cached, as before); the limit is restored in a call of its own if the pair failed.
 */
export async function dropCachedBlocks(conn: DuckDBConnection, memoryLimit: string): Promise<void> {
  const restore = memoryLimitSql(memoryLimit)
  await conn
    .run(`${memoryLimitSql(EVICTING_LIMIT)}; ${restore}`)
    .catch(() => conn.run(restore))
    .catch(() => {})
}
