import * as v from 'valibot'

export const postgresSinkConfig = v.strictObject({
  connection_string: v.pipe(
    v.string(),
    v.minLength(1),
    v.description('postgres://user:password@host:port/database'),
  ),
  schema: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.description('Schema the tables are created in (created if missing)'),
    ),
    'public',
  ),
  concurrent_writes: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(16),
      v.description('Batches loaded at once, each on its own connection (each still lands exactly once)'),
    ),
    2,
  ),
})

export type PostgresSinkConfig = v.InferOutput<typeof postgresSinkConfig>
/** The config as written, before defaults. */
export type PostgresSinkOptions = v.InferInput<typeof postgresSinkConfig>
