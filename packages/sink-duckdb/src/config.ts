import { z } from 'zod'

export const duckdbConfig = z.strictObject({
  path: z.string().min(1).describe('The DuckDB database file, relative to skippr.yml; created if missing'),
  schema: z.string().min(1).default('main').describe('The schema that receives the tables'),
})

export type DuckdbConfig = z.infer<typeof duckdbConfig>
