import { crossFieldCheck } from '@skippr/connector-api'
import * as v from 'valibot'

const tableEntry = v.union([
  v.pipe(v.string(), v.minLength(1), v.description('A table in the public schema, read by its primary key')),
  v.strictObject({
    name: v.pipe(v.string(), v.minLength(1), v.description('Table name; it is also the namespace name')),
    cursor: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description('A column that only grows (serial id, updated_at); defaults to the primary key'),
      ),
    ),
    schema: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('Schema holding the table (default public)')),
    ),
  }),
])

export const postgresSourceConfig = v.pipe(
  v.strictObject({
    connection_string: v.pipe(
      v.string(),
      v.minLength(1),
      v.description('postgres://user:password@host:port/database'),
    ),
    tables: v.pipe(
      v.array(tableEntry),
      v.minLength(1),
      v.description('Tables to read: names, or { name, cursor?, schema? }'),
    ),
    mode: v.optional(
      v.pipe(
        v.picklist(['incremental', 'snapshot']),
        v.description('incremental: new rows after the saved cursor; snapshot: the whole table every run'),
      ),
      'incremental',
    ),
    batch_rows: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Rows per chunk read from PostgreSQL')),
      10_000,
    ),
    poll_interval_seconds: v.optional(
      v.pipe(
        v.number(),
        v.gtValue(0),
        v.description('Pause between passes over the tables when the sync keeps running'),
      ),
      5,
    ),
  }),
  crossFieldCheck((config) => {
    const seen = new Set<string>()
    return config.tables.flatMap((entry, index) => {
      const name = typeof entry === 'string' ? entry : entry.name
      const twice = seen.has(name)
      seen.add(name)
      return twice
        ? [
            {
              path: ['tables', index],
              message: `table ${name} is listed twice; each table name is a namespace and must be unique`,
            },
          ]
        : []
    })
  }),
)

export type PostgresSourceConfig = v.InferOutput<typeof postgresSourceConfig>
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
