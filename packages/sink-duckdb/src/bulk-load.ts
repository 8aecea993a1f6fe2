/**
 * DuckDB's own load of a CSV file, for `skipprd benchmark`: one `CREATE TABLE … AS SELECT * FROM
 * read_csv(…)` with the columns typed as the sink types them, on a connection set up as the sink's
 * are (its memory limit and threads), in the sink's file and schema.
 */
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { BulkLoad, ConnectorContext, NamespaceSchema } from '@skippr/connector-api'
import { BATCHES_TABLE, FENCES_TABLE, makeDirectory } from '@skippr/connector-api'
import type { DuckdbConfig } from './config.js'
import { connectionSettings } from './connection-settings.js'
import { createDatabaseFile } from './database-file.js'
import { type DuckDBInstance, duckdbApi } from './duckdb.js'
import { columnsStruct, ident, literal } from './sql.js'
import { tableName } from './tables.js'

interface Open {
  readonly instance: DuckDBInstance
  readonly conn: DuckDBConnection
}

export class DuckdbBulkLoad implements BulkLoad {
  private readonly file: string
  private readonly dbSchema: string
  private readonly settings: readonly string[]
  private opened: Promise<Open> | undefined

  constructor(config: DuckdbConfig, context: Pick<ConnectorContext, 'configDir'>) {
    this.file = path.resolve(context.configDir, config.path)
    this.dbSchema = config.schema
    this.settings = connectionSettings(config)
  }

  async load(table: string, schema: NamespaceSchema, csvFile: string): Promise<number> {
    const { conn } = await this.open()
    const name = tableName(this.dbSchema, table)
    await conn.run(
      `CREATE TABLE ${name} AS SELECT * FROM read_csv(${literal(csvFile)}, ` +
        `columns = ${columnsStruct(schema.fields)}, header = true, auto_detect = false)`,
    )
    // A CREATE TABLE … AS reports no rows changed.
    const counted = await conn.runAndReadAll(`SELECT count(*) FROM ${name}`)
    return Number(counted.getRows()[0]?.[0])
  }

  async drop(table: string): Promise<void> {
    const { conn } = await this.open()
    await conn.run(`DROP TABLE IF EXISTS ${tableName(this.dbSchema, table)}`)
  }

  async forgetPipeline(pipeline: string): Promise<void> {
    const { conn } = await this.open()
    const found = await conn.runAndReadAll(
      `SELECT table_name FROM duckdb_tables() WHERE schema_name = ${literal(this.dbSchema)} ` +
        `AND table_name IN (${literal(BATCHES_TABLE)}, ${literal(FENCES_TABLE)})`,
    )
    for (const [name] of found.getRows())
      await conn.run(
        `DELETE FROM ${ident(this.dbSchema)}.${ident(String(name))} WHERE pipeline = ${literal(pipeline)}`,
      )
  }

  async close(): Promise<void> {
    const opened = this.opened
    this.opened = undefined
    const open = await opened?.catch(() => undefined)
    open?.conn.closeSync()
    open?.instance.closeSync()
  }

  /**
   * Through the instance cache, as the sink opens the file: in one process the two share the
   * database, which DuckDB lets one process at a time open.
   */
  private open(): Promise<Open> {
    this.opened ??= (async () => {
      await makeDirectory(path.dirname(this.file))
      await createDatabaseFile(this.file)
      const instance = await duckdbApi().DuckDBInstance.fromCache(this.file)
      let conn: DuckDBConnection | undefined
      try {
        conn = await instance.connect()
        await conn.run([...this.settings, `CREATE SCHEMA IF NOT EXISTS ${ident(this.dbSchema)}`].join('; '))
        return { instance, conn }
      } catch (error) {
        // An open connection keeps the cached instance alive (sink.ts, connect).
        conn?.closeSync()
        instance.closeSync()
        throw error
      }
    })()
    return this.opened
  }
}
