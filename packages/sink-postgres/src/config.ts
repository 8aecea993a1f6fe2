import { z } from 'zod'

export const postgresSinkConfig = z.strictObject({
  connection_string: z.string().min(1).describe('postgres://user:password@host:port/database'),
  schema: z
    .string()
    .min(1)
    .default('public')
    .describe('Schema the tables are created in (created if missing)'),
})

export type PostgresSinkConfig = z.infer<typeof postgresSinkConfig>
