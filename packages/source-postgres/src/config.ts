import { z } from 'zod'

const tableEntry = z.union([
  z.string().min(1).describe('A table in the public schema, read by its primary key'),
  z.strictObject({
    name: z.string().min(1).describe('Table name; it is also the namespace name'),
    cursor: z
      .string()
      .min(1)
      .optional()
      .describe('A column that only grows (serial id, updated_at); defaults to the primary key'),
    schema: z.string().min(1).optional().describe('Schema holding the table (default public)'),
  }),
])

export const postgresSourceConfig = z
  .strictObject({
    connection_string: z.string().min(1).describe('postgres://user:password@host:port/database'),
    tables: z.array(tableEntry).min(1).describe('Tables to read: names, or { name, cursor?, schema? }'),
    mode: z
      .enum(['incremental', 'snapshot'])
      .default('incremental')
      .describe('incremental: new rows after the saved cursor; snapshot: the whole table every run'),
    batch_rows: z.number().int().positive().default(10_000).describe('Rows per chunk read from PostgreSQL'),
    poll_interval_seconds: z
      .number()
      .positive()
      .default(5)
      .describe('Pause between passes over the tables when the sync keeps running'),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>()
    config.tables.forEach((entry, index) => {
      const name = typeof entry === 'string' ? entry : entry.name
      if (seen.has(name))
        ctx.addIssue({
          code: 'custom',
          path: ['tables', index],
          message: `table ${name} is listed twice; each table name is a namespace and must be unique`,
        })
      seen.add(name)
    })
  })

export type PostgresSourceConfig = z.infer<typeof postgresSourceConfig>
export type Mode = PostgresSourceConfig['mode']

/** One configured table with its defaults applied. */
export interface TableSpec {
  readonly schema: string
  readonly name: string
  readonly cursor: string | undefined
}

export function tableSpecs(config: PostgresSourceConfig): TableSpec[] {
  return config.tables.map((entry) =>
    typeof entry === 'string'
      ? { schema: 'public', name: entry, cursor: undefined }
      : { schema: entry.schema ?? 'public', name: entry.name, cursor: entry.cursor },
  )
}
