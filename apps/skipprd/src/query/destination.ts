/**
 * The landed side of a pipeline whose data_sink is DuckDB. Its rows leave the WAL once they land,
 * so the WAL alone would show such a pipeline nearly empty: its views add the warehouse's table for
 * the namespace, and drop the pending rows of every batch the warehouse already records in
 * `_skippr_batches` (landed but not yet marked landed in the WAL, or landed since the WAL snapshot).
 *
 * The warehouse is attached READ_ONLY after the WAL snapshot is taken, so a batch is in one of the
 * two, never neither: one acked before the snapshot landed before it. It is attached for one
 * statement and detached once its rows are read, because DuckDB lets one process at a time open a
 * file and a sync must be able to land between statements (a query never waits for, or holds up, a
 * sync). A file that cannot be opened — a sync holds it while it lands and `idle_close_seconds`
 * after — is not waited for: the pipeline shows its WAL rows only, and the operator is told so in
 * one line. A file that does not exist yet, or a table not created yet, has nothing landed to show.
 */
import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import { BATCHES_TABLE } from '@skippr/connector-api'
import { type DuckdbConfig, sink as duckdbSink, ident, literal } from '@skippr/sink-duckdb'
import type { ConfigFile } from '../config/load.js'
import type { PipelineSettings } from '../config/settings.js'
import { resolveSink } from '../connectors.js'

/** Where a DuckDB sink lands a pipeline's tables. */
export interface Warehouse {
  /** Absolute. */
  readonly file: string
  /** The DuckDB schema holding the tables and `_skippr_batches`. */
  readonly schema: string
}

/** The pipeline's DuckDB warehouse; undefined when its data_sink is none or of another type. */
export async function duckdbWarehouse(
  file: ConfigFile,
  settings: PipelineSettings,
  onSecrets: (secrets: readonly string[]) => void,
): Promise<Warehouse | undefined> {
  const entry = settings.sinkEntry
  const raw = entry === undefined ? undefined : file.data.data_sinks?.[entry]
  // Another sink's package is never loaded: the query reads nothing of it.
  if (entry === undefined || raw === undefined || Object.keys(raw)[0] !== duckdbSink.type) return undefined
  const resolved = await resolveSink(file, entry)
  onSecrets(resolved.secrets)
  const config = resolved.config as DuckdbConfig
  return { file: path.resolve(file.dir, config.path), schema: config.schema }
}

/** A warehouse attached for the current statement. */
export interface LandedTables {
  /** The pipeline's landed rows of `namespace` as a SELECT; undefined when there is no table for it. */
  table(namespace: string): string | undefined
  /** `<seq column> NOT IN (…)`: the pending rows of batches the warehouse does not record as landed. */
  notLanded(seqColumn: string, pipeline: string, epoch: string): string
}

interface Attachment {
  readonly alias: string
  /** `schema\0lower(table)` → the table's name as DuckDB stores it. */
  readonly tables: ReadonlyMap<string, string>
}

export class Warehouses {
  /** Per file, for the statement being prepared: pipelines sharing a warehouse attach it once. */
  private attached = new Map<string, Promise<Attachment | undefined>>()
  private aliases = 0

  constructor(
    private readonly conn: DuckDBConnection,
    /** Told, in one line, that a pipeline shows its WAL rows only because its warehouse cannot be opened. */
    private readonly notice: (message: string) => void,
  ) {}

  /**
   * Attaches the pipeline's warehouse for the current statement. Undefined when there is none, its
   * file does not exist yet, or it cannot be opened (after a notice naming the pipeline and why).
   */
  async open(
    pipeline: string,
    find: () => Promise<Warehouse | undefined>,
  ): Promise<LandedTables | undefined> {
    let warehouse: Warehouse | undefined
    let attachment: Attachment | undefined
    try {
      warehouse = await find()
      if (warehouse === undefined) return undefined
      let attaching = this.attached.get(warehouse.file)
      if (attaching === undefined) {
        attaching = this.attach(warehouse.file)
        this.attached.set(warehouse.file, attaching)
      }
      attachment = await attaching
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0]?.replace(/\s*See also \S+$/, '')
      const what = warehouse
        ? `its DuckDB warehouse ${warehouse.file} cannot be opened`
        : 'its data_sink cannot be read'
      this.notice(
        `pipeline '${pipeline}': showing only its rows still in the WAL, not those landed: ${what} (${reason})`,
      )
      return undefined
    }
    return attachment && landedTables(attachment, warehouse.schema)
  }

  /** Detaches every warehouse, so a sync can open it again. */
  async release(): Promise<void> {
    const attached = [...this.attached.values()]
    this.attached = new Map()
    for (const attachment of await Promise.allSettled(attached))
      if (attachment.status === 'fulfilled' && attachment.value)
        await this.conn.run(`DETACH ${attachment.value.alias}`)
  }

  /** Undefined when the file holds no database yet (an empty file is what a killed creation left). */
  private async attach(file: string): Promise<Attachment | undefined> {
    const size = await stat(file).then(
      (found) => found.size,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return 0
        throw error
      },
    )
    if (size === 0) return undefined
    const alias = `skippr_landed_${++this.aliases}`
    await this.conn.run(`ATTACH ${literal(file)} AS ${alias} (READ_ONLY)`)
    const reader = await this.conn
      .runAndReadAll('SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = $1', [alias])
      .catch(async (error: unknown) => {
        // Not handed to release(): let the file go here.
        await this.conn.run(`DETACH ${alias}`)
        throw error
      })
    const tables = new Map<string, string>()
    // DuckDB identifiers are case-insensitive even when quoted.
    for (const [schema, table] of reader.getRows() as [string, string][])
      tables.set(tableKey(schema, table), table)
    return { alias, tables }
  }
}

function landedTables(attachment: Attachment, schema: string): LandedTables {
  const qualified = (table: string) => `${attachment.alias}.${ident(schema)}.${ident(table)}`
  const ledger = attachment.tables.get(tableKey(schema, BATCHES_TABLE))
  return {
    table(namespace) {
      const table = attachment.tables.get(tableKey(schema, namespace))
      return table === undefined ? undefined : `SELECT * FROM ${qualified(table)}`
    },
    notLanded(seqColumn, pipeline, epoch) {
      // Tables made without the sink's ledger (by hand) record no batch.
      if (ledger === undefined) return 'true'
      return `${seqColumn} NOT IN (SELECT seq FROM ${qualified(ledger)} WHERE pipeline = ${literal(pipeline)} AND epoch = ${literal(epoch)})`
    },
  }
}

function tableKey(schema: string, table: string): string {
  return `${schema}\u0000${table.toLowerCase()}`
}
