import { randomBytes } from 'node:crypto'
import { silentLogger } from '@skippr/connector-api'
import pg from 'pg'
import { PostgresSink } from '../src/index.js'

export const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

const DATE_OID = 1082

/** A client on a schema of its own, dropped by `drop()`. Dates come back as text, not local-time Dates. */
export interface TestDb {
  readonly schema: string
  /** The connection `sql` runs on, for statements `sql` cannot send (COPY). */
  readonly client: pg.Client
  sql<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>
  /** Every row of a table in the test schema, or [] when it does not exist. */
  rows(table: string): Promise<Record<string, unknown>[]>
  sink(): PostgresSink
  drop(): Promise<void>
}

export async function freshSchema(): Promise<TestDb> {
  const schema = `skippr_test_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({
    connectionString: PG_URL,
    types: {
      getTypeParser: (oid, format) =>
        oid === DATE_OID ? (v: string) => v : pg.types.getTypeParser(oid, format),
    },
  })
  await client.connect()
  const sinks: PostgresSink[] = []
  return {
    schema,
    client,
    sql: (text, values) => client.query(text, values),
    async rows(table) {
      const found = await client.query('SELECT to_regclass($1) IS NOT NULL AS found', [
        `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`,
      ])
      if (!found.rows[0]?.found) return []
      const result = await client.query(
        `SELECT * FROM ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`,
      )
      return result.rows
    },
    sink() {
      const sink = new PostgresSink({ connection_string: PG_URL, schema }, silentLogger)
      sinks.push(sink)
      return sink
    },
    async drop() {
      for (const sink of sinks) await sink.close().catch(() => {})
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await client.end()
    },
  }
}
