import * as v from 'valibot'

/** DuckDB's own default is 80% of the machine's memory, far more than loading a batch needs. */
export const DEFAULT_MEMORY_LIMIT = '256MB'
/** How long the sink keeps the database file open with nothing to land. */
export const DEFAULT_IDLE_CLOSE_SECONDS = 5

export const duckdbConfig = v.strictObject({
  path: v.pipe(
    v.string(),
    v.minLength(1),
    v.description('The DuckDB database file, relative to skippr.yml; created if missing'),
  ),
  schema: v.optional(
    v.pipe(v.string(), v.minLength(1), v.description('The schema that receives the tables')),
    'main',
  ),
  memory_limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'a size such as 256MB or 1GiB'),
      v.description(
        `DuckDB's memory_limit while the sink loads, e.g. 512MB (default ${DEFAULT_MEMORY_LIMIT})`,
      ),
    ),
  ),
  idle_close_seconds: v.optional(
    v.pipe(
      v.number(),
      v.minValue(0),
      v.description(
        `Seconds with nothing to land after which the sink closes the database file, so other processes can open it (default ${DEFAULT_IDLE_CLOSE_SECONDS})`,
      ),
    ),
  ),
  threads: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description("DuckDB threads that parse and write a batch (default: DuckDB's, one per core)"),
    ),
  ),
})

export type DuckdbConfig = v.InferOutput<typeof duckdbConfig>
