import * as v from 'valibot'

export const ENGINES = [
  'MergeTree',
  'ReplacingMergeTree',
  'ReplicatedMergeTree',
  'ReplicatedReplacingMergeTree',
] as const
export type Engine = (typeof ENGINES)[number]

export const clickhouseSinkConfig = v.strictObject({
  url: v.pipe(
    v.string(),
    v.url(),
    v.check(
      (url) => !new URL(url).username && !new URL(url).password,
      'the url holds a user or password: give them as username and password instead',
    ),
    v.description('The HTTP interface, e.g. http://host:8123'),
  ),
  database: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.description('Database the tables are created in (created if missing)'),
    ),
    'default',
  ),
  username: v.optional(v.pipe(v.string(), v.minLength(1), v.description('ClickHouse user')), 'default'),
  password: v.optional(v.pipe(v.string(), v.description("The user's password (secret)"))),
  engine: v.optional(
    v.pipe(
      v.picklist(ENGINES),
      v.description('Table engine of the tables created; the Replacing engines need a primary key'),
    ),
    'MergeTree',
  ),
  zookeeper_path: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.description(
        'ZooKeeper path of a replicated table; {database} and {table} are filled in by the sink, other macros ({shard}) by the server',
      ),
    ),
    '/clickhouse/tables/{shard}/{database}/{table}',
  ),
  replica: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.description('Replica name of a replicated table (a server macro by default)'),
    ),
    '{replica}',
  ),
  settings: v.optional(
    v.pipe(
      v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])),
      v.description('ClickHouse settings sent with every insert, e.g. { insert_quorum: 2 }'),
    ),
    {},
  ),
})

export type ClickhouseSinkConfig = v.InferOutput<typeof clickhouseSinkConfig>
/** The config as written, before defaults. */
export type ClickhouseSinkOptions = v.InferInput<typeof clickhouseSinkConfig>

export function isReplicated(engine: Engine): boolean {
  return engine.startsWith('Replicated')
}

export function isReplacing(engine: Engine): boolean {
  return engine.endsWith('ReplacingMergeTree')
}
