import { z } from 'zod'

/** DuckDB's own default is 80% of the machine's memory, far more than loading a batch needs. */
export const DEFAULT_MEMORY_LIMIT = '256MB'

export const duckdbConfig = z.strictObject({
  path: z.string().min(1).describe('The DuckDB database file, relative to skippr.yml; created if missing'),
  schema: z.string().min(1).default('main').describe('The schema that receives the tables'),
  memory_limit: z
    .string()
    .regex(/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'a size such as 256MB or 1GiB')
    .optional()
    .describe(`DuckDB's memory_limit while the sink loads, e.g. 512MB (default ${DEFAULT_MEMORY_LIMIT})`),
  threads: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("DuckDB threads that parse and write a batch (default: DuckDB's, one per core)"),
})

export type DuckdbConfig = z.infer<typeof duckdbConfig>
