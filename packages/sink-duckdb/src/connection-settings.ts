/** How the sink sets up each connection it opens: its bulk load too loads as the sink is configured. */
import { memoryLimitSql } from './cached-blocks.js'
import { DEFAULT_MEMORY_LIMIT, type DuckdbConfig } from './config.js'

/** The SET statements a connection of the sink's runs first. */
export function connectionSettings(config: DuckdbConfig): string[] {
  return [
    // Widening a DATE column to TIMESTAMPTZ must give midnight UTC, whatever the host's zone.
    "SET TimeZone = 'UTC'",
    memoryLimitSql(config.memory_limit ?? DEFAULT_MEMORY_LIMIT),
    // Each batch appends its own row groups, the last one partly filled. Merging those at a checkpoint
    // rewrites the table's recent data (most of the time closing the sink took); left alone they cost
    // a little space, and a CHECKPOINT from any other DuckDB session still merges them.
    'SET max_vacuum_tasks = 0',
    // Each load frees its CSV buffers and row-group builders in bulk (tens of MB); by default the
    // allocator keeps up to 512 MB of such memory cached, and a 1M-row sync peaked about 45 MB higher.
    // Returning it after each load costs about 0.1 CPU-second of page faults over that sync.
    "SET allocator_bulk_deallocation_flush_threshold = '32MB'",
    ...(config.threads === undefined ? [] : [`SET threads = ${config.threads}`]),
  ]
}
