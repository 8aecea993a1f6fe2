/**
 * PostgreSQL's own load of a CSV file, for `skipprd benchmark`: `COPY … FROM STDIN (FORMAT csv,
 * HEADER)` streaming the file, as `psql \copy` does, into a table the sink's own DDL creates (the
 * columns typed as the sink types them), in the sink's schema.
 */
import { createReadStream } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import type { BulkLoad, NamespaceSchema } from '@skippr/connector-api'
import { BATCHES_TABLE, FENCES_TABLE } from '@skippr/connector-api'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { parse } from 'valibot'
import { type PostgresSinkOptions, postgresSinkConfig } from './config.js'
import { createPool } from './connection.js'
import { prepareTable, qualifiedName } from './ddl.js'

export class PostgresBulkLoad implements BulkLoad {
  private readonly schema: string
  /** One connection: the load is one COPY, as psql's. */
  private readonly pool: pg.Pool

  /** `config` as in skippr.yml; keys left out take their defaults. */
  constructor(config: PostgresSinkOptions) {
    this.schema = parse(postgresSinkConfig, config).schema
    this.pool = createPool(config.connection_string, 1)
  }

  async load(table: string, schema: NamespaceSchema, csvFile: string): Promise<number> {
    return this.withClient(async (client) => {
      await prepareTable(client, this.schema, { ...schema, namespace: table })
      const columns = schema.fields.map((field) => pg.escapeIdentifier(field.name)).join(', ')
      const copy = client.query(
        copyFrom(`COPY ${qualifiedName(this.schema, table)} (${columns}) FROM STDIN (FORMAT csv, HEADER)`),
      )
      await pipeline(createReadStream(csvFile), copy)
      return copy.rowCount
    })
  }

  async drop(table: string): Promise<void> {
    await this.withClient((client) =>
      client.query(`DROP TABLE IF EXISTS ${qualifiedName(this.schema, table)}`),
    )
  }

  async forgetPipeline(pipelineName: string): Promise<void> {
    await this.withClient(async (client) => {
      for (const table of [BATCHES_TABLE, FENCES_TABLE]) {
        const name = qualifiedName(this.schema, table)
        const { rows } = await client.query<{ found: boolean }>(
          'SELECT to_regclass($1) IS NOT NULL AS found',
          [name],
        )
        if (rows[0]?.found) await client.query(`DELETE FROM ${name} WHERE pipeline = $1`, [pipelineName])
      }
    })
  }

  async close(): Promise<void> {
    await this.pool.end()
  }

  private async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect()
    let failed: Error | undefined
    try {
      return await work(client)
    } catch (error) {
      // A connection whose COPY failed midway is not given back for reuse.
      failed = error instanceof Error ? error : new Error(String(error))
      throw error
    } finally {
      client.release(failed)
    }
  }
}
