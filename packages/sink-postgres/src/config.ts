import { z } from 'zod'

export const postgresSinkConfig = z.strictObject({
  connection_string: z.string().min(1).describe('postgres://user:password@host:port/database'),
  schema: z
    .string()
    .min(1)
    .default('public')
    .describe('Schema the tables are created in (created if missing)'),
  concurrent_writes: z
    .number()
    .int()
    .min(1)
    .max(16)
    .default(2)
    .describe('Batches loaded at once, each on its own connection (each still lands exactly once)'),
})

export type PostgresSinkConfig = z.infer<typeof postgresSinkConfig>
/** The config as written, before defaults. */
export type PostgresSinkOptions = z.input<typeof postgresSinkConfig>
