/**
 * The WAL as DuckDB tables. Each pipeline gets a DuckDB schema named after it with a view per
 * namespace, `<pipeline>.<namespace>`, whose columns are the newest saved schema's fields with
 * their types. Behind the views, each pipeline has its own attached database — its query cache —
 * holding the pending rows, each tagged with the seq of the batch it came from.
 *
 * `refresh` brings the cache up to a fresh snapshot of the WAL (`openWalSnapshot`: no lock, no
 * lease, safe while a sync writes): rows of batches landed since are deleted, batches committed
 * since are loaded (load.ts), and everything is rebuilt when the WAL's epoch (a reset) or the saved
 * schemas changed. A batch identity (epoch, seq) never names other rows, so rows loaded once stay
 * right. The cache's own record (epoch, loaded and landed seq, layout) changes in the same DuckDB
 * transaction as its rows, so a query killed mid-load leaves the cache as it was.
 *
 * The cache is a file under the pipeline's data dir (`query/<pipeline>.duckdb`), so a query only
 * loads what is new since the last one. If another query process holds that file, or with
 * SKIPPR_QUERY_CACHE=off, it is an in-memory database this session fills itself.
 *
 * A pipeline whose data_sink is DuckDB shows its landed rows too (destination.ts): its views are
 * the pending rows of batches the warehouse does not record, UNION ALL BY NAME the warehouse's
 * table, made anew for each statement since the warehouse is attached for one statement at a time.
 */
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { NamespaceSchema } from '@skippr/connector-api'
import { columnType, createDatabaseFile, ident, literal } from '@skippr/sink-duckdb'
import type { SavedSchema } from '@skippr/state'
import { openWalSnapshot, slotName, type WalSnapshot } from '@skippr/wal'
import type { PipelineSettings } from '../config/settings.js'
import { walBackend } from '../runner/wal-backend.js'
import type { PipelineHandle } from './catalog.js'
import { type LandedTables, type Warehouse, Warehouses } from './destination.js'
import { insertSql, SchemaVersions, SEQ_COLUMN, WalBatchFiles } from './load.js'

/** Bumped when the cache's layout changes: older caches are rebuilt. */
const CACHE_FORMAT = 1
export const CACHE_DIR_NAME = 'query'

/** Where a pipeline's query cache lives. */
export function cacheFile(settings: Pick<PipelineSettings, 'name' | 'dataDir'>): string {
  return path.join(settings.dataDir, CACHE_DIR_NAME, `${slotName(settings.name)}.duckdb`)
}

interface Attached {
  /** Its name in the session: `skippr_wal_<n>`, a plain identifier. */
  readonly alias: string
  /** The layout the views were last created for. */
  viewsLayout: string | undefined
}

/** What the cache holds: recorded beside its rows. */
interface CacheState {
  readonly epoch: string
  readonly loadedSeq: bigint
  readonly landedSeq: bigint
  readonly layout: string
}

/** The newest schema of every namespace, and the key the cache is built for. */
interface Layout {
  readonly schemas: readonly NamespaceSchema[]
  readonly versions: ReadonlyMap<string, number>
  readonly key: string
}

export interface WalTablesOptions {
  /** False keeps every cache in memory (SKIPPR_QUERY_CACHE=off). */
  readonly persistent: boolean
  /** Told when a pipeline's cache file cannot be used and memory is used instead. */
  readonly warn: (message: string) => void
  /** Told when a pipeline shows only its WAL rows because its warehouse cannot be opened. */
  readonly notice: (message: string) => void
}

export class WalTables {
  private readonly attached = new Map<string, Attached>()
  private readonly files = new WalBatchFiles()
  private readonly warehouses: Warehouses
  private aliases = 0

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly options: WalTablesOptions,
  ) {
    this.warehouses = new Warehouses(conn, options.notice)
  }

  /**
   * Makes `<pipeline>.<namespace>` show the pipeline's pending rows as of now, and the rows landed in
   * its DuckDB warehouse (`warehouse`, when it has one) as of after that, until `release`.
   */
  async refresh(pipeline: PipelineHandle, warehouse: () => Promise<Warehouse | undefined>): Promise<void> {
    const { settings, state } = pipeline
    const attached = await this.attach(settings)
    const snapshot = await openWalSnapshot({
      pipeline: settings.name,
      dataDir: settings.dataDir,
      backend: walBackend(settings, pipeline.state),
    })
    let landed: LandedTables | undefined
    let layout: Layout
    try {
      // Read after the snapshot opened: a schema is saved before the rows that use it are committed.
      layout = layoutOf(await state.listSchemas())
      await this.update(attached, snapshot, layout, new SchemaVersions(state))
      // After the snapshot, so every batch acked in it has landed by now.
      landed = await this.warehouses.open(settings.name, warehouse)
    } finally {
      await snapshot.close()
    }
    if (landed !== undefined) {
      await this.createViews(settings.name, attached, layout.schemas, { landed, epoch: snapshot.epoch ?? '' })
      // Made for this statement's attachment: the next refresh makes them anew.
      attached.viewsLayout = undefined
    } else if (attached.viewsLayout !== layout.key) {
      await this.createViews(settings.name, attached, layout.schemas)
      attached.viewsLayout = layout.key
    }
  }

  /**
   * The cache table behind `<pipeline>.<namespace>` (the fields and `_skippr_seq`), after a
   * `refresh` of the pipeline: what STREAM reads batch by batch. Undefined before any refresh.
   */
  pendingTable(pipeline: string, namespace: string): string | undefined {
    const attached = this.attached.get(pipeline)
    return attached && this.table(attached, namespace)
  }

  /** Lets go of the warehouses the last refreshes attached, once a statement's rows are read. */
  release(): Promise<void> {
    return this.warehouses.release()
  }

  /** Detaches a pipeline's cache and drops its views (before DROP PIPELINE deletes the cache file). */
  async forget(pipeline: string): Promise<void> {
    const attached = this.attached.get(pipeline)
    if (attached === undefined) return
    this.attached.delete(pipeline)
    await this.conn.run(`DROP SCHEMA IF EXISTS memory.${ident(pipeline)} CASCADE`)
    await this.conn.run(`DETACH ${attached.alias}`)
  }

  /** Removes this session's load files (the caches close with the DuckDB instance). */
  close(): Promise<void> {
    return this.files.close()
  }

  /** Brings the cache from what it holds to `snapshot`: rebuild, or drop landed rows and load new batches. */
  private async update(
    attached: Attached,
    snapshot: WalSnapshot,
    layout: Layout,
    versions: SchemaVersions,
  ): Promise<void> {
    const epoch = snapshot.epoch ?? ''
    const cached = await this.readState(attached)
    const from = cached?.layout === layout.key && cached.epoch === epoch ? cached : undefined
    const written = await this.files.write(snapshot.batches(from?.loadedSeq), versions, layout.versions)
    try {
      const landedSeq = snapshot.landedSeq
      // Nothing new: the usual case for a query after the first, kept free of any disk write.
      if (from && written.lastSeq === undefined && landedSeq === from.landedSeq) return
      await this.transaction(async () => {
        if (from === undefined) await this.recreateTables(attached, layout.schemas)
        else if (landedSeq > from.landedSeq) await this.deleteLanded(attached, layout.schemas, landedSeq)
        for (const group of written.groups)
          await this.conn.run(insertSql(this.table(attached, group.namespace), group))
        const loadedSeq = written.lastSeq ?? from?.loadedSeq ?? 0n
        await this.writeState(attached, { epoch, loadedSeq, landedSeq, layout: layout.key })
      })
    } finally {
      await this.files.remove(written)
    }
  }

  private async attach(settings: PipelineSettings): Promise<Attached> {
    const known = this.attached.get(settings.name)
    if (known) return known
    const alias = `skippr_wal_${++this.aliases}`
    if (!this.options.persistent || !(await this.attachFile(alias, settings))) {
      await this.conn.run(`ATTACH ':memory:' AS ${alias}`)
    }
    await this.conn.run(`CREATE SCHEMA IF NOT EXISTS ${alias}.skippr`)
    await this.conn.run(
      `CREATE TABLE IF NOT EXISTS ${alias}.skippr.state (epoch VARCHAR, loaded_seq BIGINT, landed_seq BIGINT, layout VARCHAR)`,
    )
    const attached: Attached = { alias, viewsLayout: undefined }
    this.attached.set(settings.name, attached)
    return attached
  }

  /** False (after a warning) when the cache file cannot be used, most often because another query holds it. */
  private async attachFile(alias: string, settings: PipelineSettings): Promise<boolean> {
    const file = cacheFile(settings)
    try {
      await mkdir(path.dirname(file), { recursive: true })
      // Whole or absent, as the sink makes its warehouse: a query killed while DuckDB created the
      // cache would leave an empty file every later query refuses.
      await createDatabaseFile(file)
      await this.conn.run(`ATTACH ${literal(file)} AS ${alias}`)
      return true
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0]
      this.options.warn(
        `query cache ${file} is not usable (${reason}); reading pipeline '${settings.name}' into memory`,
      )
      return false
    }
  }

  private async readState(attached: Attached): Promise<CacheState | undefined> {
    const reader = await this.conn.runAndReadAll(
      `SELECT epoch, loaded_seq, landed_seq, layout FROM ${attached.alias}.skippr.state`,
    )
    const row = reader.getRows()[0]
    if (row === undefined) return undefined
    const [epoch, loadedSeq, landedSeq, layout] = row as [string, bigint, bigint, string]
    return { epoch, loadedSeq, landedSeq, layout }
  }

  private async writeState(attached: Attached, state: CacheState): Promise<void> {
    await this.conn.run(`DELETE FROM ${attached.alias}.skippr.state`)
    await this.conn.run(`INSERT INTO ${attached.alias}.skippr.state VALUES ($1, $2, $3, $4)`, [
      state.epoch,
      state.loadedSeq,
      state.landedSeq,
      state.layout,
    ])
  }

  private async recreateTables(attached: Attached, schemas: readonly NamespaceSchema[]): Promise<void> {
    const reader = await this.conn.runAndReadAll(
      `SELECT table_name FROM duckdb_tables() WHERE database_name = $1 AND schema_name = 'main'`,
      [attached.alias],
    )
    for (const [name] of reader.getRows())
      await this.conn.run(`DROP TABLE ${this.table(attached, String(name))}`)
    for (const schema of schemas) {
      const columns = [
        ...schema.fields.map((f) => `${ident(f.name)} ${columnType(f.type)}`),
        `${SEQ_COLUMN} BIGINT`,
      ]
      await this.conn.run(`CREATE TABLE ${this.table(attached, schema.namespace)} (${columns.join(', ')})`)
    }
  }

  private async deleteLanded(
    attached: Attached,
    schemas: readonly NamespaceSchema[],
    landedSeq: bigint,
  ): Promise<void> {
    for (const schema of schemas) {
      await this.conn.run(`DELETE FROM ${this.table(attached, schema.namespace)} WHERE ${SEQ_COLUMN} <= $1`, [
        landedSeq,
      ])
    }
  }

  private async createViews(
    pipeline: string,
    attached: Attached,
    schemas: readonly NamespaceSchema[],
    warehouse?: { readonly landed: LandedTables; readonly epoch: string },
  ): Promise<void> {
    await this.conn.run(`DROP SCHEMA IF EXISTS memory.${ident(pipeline)} CASCADE`)
    await this.conn.run(`CREATE SCHEMA memory.${ident(pipeline)}`)
    for (const schema of schemas) {
      const columns = schema.fields.map((f) => ident(f.name)).join(', ')
      const view = `memory.${ident(pipeline)}.${ident(schema.namespace)}`
      const pending = `SELECT ${columns} FROM ${this.table(attached, schema.namespace)}`
      const landed = warehouse?.landed.table(schema.namespace)
      // By name, the pending side first: the schema's columns keep their order, the table's own follow.
      const select =
        warehouse === undefined || landed === undefined
          ? pending
          : `${pending} WHERE ${warehouse.landed.notLanded(SEQ_COLUMN, pipeline, warehouse.epoch)} UNION ALL BY NAME ${landed}`
      await this.conn.run(`CREATE VIEW ${view} AS ${select}`)
    }
  }

  private table(attached: Attached, namespace: string): string {
    return `${attached.alias}.main.${ident(namespace)}`
  }

  private async transaction(work: () => Promise<void>): Promise<void> {
    await this.conn.run('BEGIN TRANSACTION')
    try {
      await work()
      await this.conn.run('COMMIT')
    } catch (error) {
      await this.conn.run('ROLLBACK').catch(() => {})
      throw error
    }
  }
}

function layoutOf(saved: readonly SavedSchema[]): Layout {
  const schemas = saved
    .map((s) => s.schema as unknown as NamespaceSchema)
    .sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0))
  const key = JSON.stringify([
    CACHE_FORMAT,
    schemas.map((s) => [s.namespace, s.fields.map((f) => [f.name, f.type])]),
  ])
  return { schemas, versions: new Map(saved.map((s) => [s.namespace, s.version])), key }
}
