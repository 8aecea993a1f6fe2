/**
 * Where the chaos runs land: the `data_sinks` entry skipprd is given, and a way to query the
 * result afterwards. DuckDB is opened only after the last run (skipprd holds the file's lock
 * while it runs); PostgreSQL gets a fresh schema, dropped on dispose; ClickHouse and RabbitMQ
 * (destination-clickhouse.ts, destination-amqp.ts) are read through a DuckDB mirror, and so are
 * the object stores S3, Azure Blob and SFTP (object-destination.ts), whose objects are audited too;
 * Snowflake and BigQuery land in fakes whose DuckDB file is read (destination-warehouse.ts).
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import pg from 'pg'

export const SINKS = [
  'duckdb',
  'postgres',
  'clickhouse',
  'clickhouse-replicated',
  'amqp',
  's3',
  'azure-blob',
  'sftp',
  'snowflake',
  'bigquery',
] as const
export type SinkKind = (typeof SINKS)[number]

export type Row = Record<string, unknown>

/** What `Destination.audit` found: its problems (none means PASS), and what it looked at, for the report. */
export interface Audit {
  readonly problems: readonly string[]
  /** e.g. `81 objects and 81 manifests`. */
  readonly summary: string
}

export interface Destination {
  /** For messages: the file or the schema. */
  readonly label: string
  /** The `data_sinks` entry of skippr.yml. */
  readonly sink: Record<string, unknown>
  /** Variables skipprd needs for the entry's `${NAME}` references. */
  readonly env: Record<string, string>
  /**
   * How a retry may land rows again (the at-least-once tier), each copy tagged with its part key in
   * `_skippr_batch` (verify-copies.ts): `false`, never; `'parts'`, as whole copies of a batch part
   * (one insert per part); `'messages'`, as copies of single rows, each with its message id in
   * `_skippr_message` (a crash can cut a part's publishing short before the retry publishes it all).
   */
  readonly retriesCopy: false | 'parts' | 'messages'
  /** The database schema both tables land in. */
  readonly schema: string
  /** The landed table, quoted. */
  readonly table: string
  /** Another table of the schema, quoted: e.g. the deadletter table `_dl_<pipeline>`. */
  qualify(table: string): string
  /** SQL for a timestamp column as whole seconds since the epoch. */
  epochSeconds(column: string): string
  query(sql: string): Promise<Row[]>
  /**
   * After the last run, the problems of the destination itself that its rows cannot show (an object
   * store: a key outside the layout, a leftover temporary file, a manifest untrue to its objects).
   */
  audit?(): Promise<Audit>
  dispose(options: { keep: boolean }): Promise<void>
}

export const PG_URL_VARIABLE = 'SKIPPR_CHAOS_PG_URL'

export function duckdbDestination(workDir: string): Destination {
  const file = 'warehouse.duckdb'
  let instance: DuckDBInstance | undefined
  let connection: Awaited<ReturnType<DuckDBInstance['connect']>> | undefined
  return {
    label: `DuckDB file ${path.join(workDir, file)}`,
    sink: { Duckdb: { path: `./${file}` } },
    env: {},
    retriesCopy: false,
    schema: 'main',
    table: 'main."rentals"',
    qualify: (table) => `main."${table}"`,
    epochSeconds: (column) => `CAST(epoch(${column}) AS BIGINT)`,
    async query(sql) {
      if (!connection) {
        instance = await DuckDBInstance.create(path.join(workDir, file))
        connection = await instance.connect()
      }
      return (await connection.runAndReadAll(sql)).getRowObjectsJS()
    },
    async dispose() {
      connection?.closeSync()
      instance?.closeSync()
    },
  }
}

export function postgresDestination(url: string): Destination {
  const schema = `skippr_chaos_${randomBytes(6).toString('hex')}`
  let client: pg.Client | undefined
  const connect = async (): Promise<pg.Client> => {
    if (!client) {
      client = new pg.Client({ connectionString: url })
      await client.connect()
    }
    return client
  }
  return {
    label: `PostgreSQL schema ${schema}`,
    sink: { Postgres: { connection_string: `\${${PG_URL_VARIABLE}}`, schema } },
    env: { [PG_URL_VARIABLE]: url },
    retriesCopy: false,
    schema,
    table: `"${schema}"."rentals"`,
    qualify: (table) => `"${schema}"."${table}"`,
    epochSeconds: (column) => `extract(epoch FROM ${column})::bigint`,
    async query(sql) {
      return (await (await connect()).query(sql)).rows
    },
    async dispose({ keep }) {
      try {
        if (!keep) await (await connect()).query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      } finally {
        await client?.end()
      }
    },
  }
}
