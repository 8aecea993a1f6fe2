/**
 * Where the chaos runs land: the `data_sinks` entry skipprd is given, and a way to query the
 * result afterwards. DuckDB is opened only after the last run (skipprd holds the file's lock
 * while it runs); PostgreSQL gets a fresh schema, dropped on dispose.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import pg from 'pg'

export const SINKS = ['duckdb', 'postgres'] as const
export type SinkKind = (typeof SINKS)[number]

export type Row = Record<string, unknown>

export interface Destination {
  /** For messages: the file or the schema. */
  readonly label: string
  /** The `data_sinks` entry of skippr.yml. */
  readonly sink: Record<string, unknown>
  /** Variables skipprd needs for the entry's `${NAME}` references. */
  readonly env: Record<string, string>
  /** The landed table, quoted. */
  readonly table: string
  /** SQL for a timestamp column as whole seconds since the epoch. */
  epochSeconds(column: string): string
  query(sql: string): Promise<Row[]>
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
    table: 'main."rentals"',
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
    table: `"${schema}"."rentals"`,
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
