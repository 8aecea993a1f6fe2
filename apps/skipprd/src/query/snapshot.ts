/**
 * The WAL as DuckDB tables. Each pipeline gets a DuckDB schema named after it with a view per
 * namespace, `<pipeline>.<namespace>`, whose columns are the newest saved schema's fields with
 * their types. Behind the views, each pipeline has its own attached database holding the pending
 * rows, each tagged with the seq of the batch it came from.
 *
 * `refresh` brings that database up to a fresh snapshot of the WAL (`openWalSnapshot`: no lock,
 * no lease, safe while a sync writes): rows of batches landed since are deleted, batches committed
 * since are loaded, and everything is rebuilt when the WAL's epoch (a reset) or the saved schemas
 * changed. A batch's identity (epoch, seq) never names other rows, so rows loaded once stay valid.
 * Loading moves bytes, not values: each part's body is written to a file as it is and DuckDB's
 * readers (read_csv / read_json) parse it with the schema's column types, as the DuckDB sink does.
 *
 * The attached database is a file under the pipeline's data dir (`query/<pipeline>.duckdb`), so
 * the next query only loads what is new. If another query process holds that file, or
 * SKIPPR_QUERY_CACHE=off, it is an in-memory database that this session fills itself.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { Field, NamespaceSchema } from '@skippr/connector-api'
import type { PipelineState } from '@skippr/state'
import { openWalSnapshot, slotName, type WalBatch } from '@skippr/wal'
import type { PipelineSettings } from '../config/settings.js'
import type { PipelineHandle } from './catalog.js'
import { columnsStruct, columnType, ident, literal } from './sql.js'

/** Bumped when the layout of the cache database changes: older caches are rebuilt. */
const CACHE_FORMAT = 1
const SEQ_COLUMN = '_skippr_seq'
const FILE_COLUMN = '_skippr_file'
export const CACHE_DIR_NAME = 'query'

/** Where a pipeline's query cache lives. */
export function cacheFile(settings: PipelineSettings): string {
  return path.join(settings.dataDir, CACHE_DIR_NAME, `${slotName(settings.name)}.duckdb`)
}

interface Attached {
  readonly alias: string
  readonly persistent: boolean
  /** The layout the views were last created for. */
  viewsLayout: string | undefined
}

interface CacheState {
  readonly epoch: string
  readonly loadedSeq: bigint
  readonly landedSeq: bigint
  readonly layout: string
}

/** Rows of one namespace and schema version in one format, each batch's body in its own file. */
interface LoadGroup {
  readonly namespace: string
  readonly fields: readonly Field[]
  readonly format: 'csv' | 'jsonl'
  readonly files: string[]
}

export interface WalTablesOptions {
  /** False keeps every cache in memory (SKIPPR_QUERY_CACHE=off). */
  readonly persistent: boolean
  /** Told when a pipeline's cache file cannot be used and memory is used instead. */
  readonly warn: (message: string) => void
}

export class WalTables {
  private readonly attached = new Map<string, Attached>()
  private tempDir: Promise<string> | undefined
  private files = 0
  private aliases = 0

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly options: WalTablesOptions,
  ) {}

  /** Makes `<pipeline>.<namespace>` show the pipeline's pending rows as of now. */
  async refresh(pipeline: PipelineHandle): Promise<void> {
    const { settings, state } = pipeline
    const attached = await this.attach(settings)
    const snapshot = await openWalSnapshot({ pipeline: settings.name, dataDir: settings.dataDir, storage: settings.walStorage })
    try {
      // Read after the snapshot opened: a schema is saved before the rows that use it are committed.
      const saved = await state.listSchemas()
      const newest = new Map(saved.map((s) => [s.namespace, s.version]))
      const schemas = saved.map((s) => s.schema as unknown as NamespaceSchema).sort(byNamespace)
      const layout = JSON.stringify([CACHE_FORMAT, schemas.map((s) => [s.namespace, s.fields.map((f) => [f.name, f.type])])])
      const epoch = snapshot.epoch ?? ''
      const cached = await this.readState(attached)
      const fresh = cached === undefined || cached.layout !== layout || cached.epoch !== epoch
      const afterSeq = fresh ? undefined : cached.loadedSeq
      const loaded = await this.writeBatches(snapshot.batches(afterSeq), state, newest)
      const landedSeq = snapshot.landedSeq
      const unchanged = !fresh && loaded.lastSeq === undefined && landedSeq === cached.landedSeq
      // Nothing to write: the usual case for a query after the first, kept free of any disk write.
      if (!unchanged) await this.transaction(async () => {
        if (fresh) await this.recreateTables(attached, schemas)
        if (!fresh && landedSeq > cached.landedSeq) await this.deleteLanded(attached, schemas, landedSeq)
        for (const group of loaded.groups) await this.load(attached, group)
        await this.writeState(attached, { epoch, loadedSeq: loaded.lastSeq ?? afterSeq ?? 0n, landedSeq, layout })
      })
      await Promise.all(loaded.groups.flatMap((g) => g.files).map((file) => rm(file, { force: true })))
      if (attached.viewsLayout !== layout) {
        await this.createViews(settings.name, attached, schemas)
        attached.viewsLayout = layout
      }
    } finally {
      await snapshot.close()
    }
  }
  /** Detaches a pipeline's cache and drops its views (before DROP PIPELINE deletes the cache file). */
  async forget(pipeline: string): Promise<void> {
    const attached = this.attached.get(pipeline)
    if (attached === undefined) return
    this.attached.delete(pipeline)
    await this.conn.run(`DROP SCHEMA IF EXISTS memory.${ident(pipeline)} CASCADE`)
    await this.conn.run(`DETACH ${ident(attached.alias)}`)
  }

  /** Removes this session's temporary files (the caches close with the DuckDB instance). */
  async close(): Promise<void> {
    const dir = this.tempDir && (await this.tempDir.catch(() => undefined))
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  }

  private async attach(settings: PipelineSettings): Promise<Attached> {
    const known = this.attached.get(settings.name)
    if (known) return known
    const alias = `skippr_wal_${++this.aliases}`
    let persistent = false
    if (this.options.persistent) {
      const file = cacheFile(settings)
      try {
        await mkdir(path.dirname(file), { recursive: true })
        await this.conn.run(`ATTACH ${literal(file)} AS ${ident(alias)}`)
        persistent = true
      } catch (error) {
        // Most often another query holds the file; this session then keeps its own copy in memory.
        this.options.warn(
          `query cache ${file} is not usable (${(error as Error).message.split('\n')[0]}); reading pipeline '${settings.name}' into memory`,
        )
      }
    }
    if (!persistent) await this.conn.run(`ATTACH ':memory:' AS ${ident(alias)}`)
    await this.conn.run(`CREATE SCHEMA IF NOT EXISTS ${ident(alias)}.skippr`)
    await this.conn.run(
      `CREATE TABLE IF NOT EXISTS ${ident(alias)}.skippr.state (epoch VARCHAR, loaded_seq BIGINT, landed_seq BIGINT, layout VARCHAR)`,
    )
    const attached: Attached = { alias, persistent, viewsLayout: undefined }
    this.attached.set(settings.name, attached)
    return attached
  }

  private async readState(attached: Attached): Promise<CacheState | undefined> {
    const reader = await this.conn.runAndReadAll(
      `SELECT epoch, loaded_seq, landed_seq, layout FROM ${ident(attached.alias)}.skippr.state`,
    )
    const row = reader.getRows()[0]
    if (row === undefined) return undefined
    const [epoch, loadedSeq, landedSeq, layout] = row as [string, bigint, bigint, string]
    return { epoch, loadedSeq, landedSeq, layout }
  }

  private async writeState(attached: Attached, state: CacheState): Promise<void> {
    await this.conn.run(`DELETE FROM ${ident(attached.alias)}.skippr.state`)
    await this.conn.run(`INSERT INTO ${ident(attached.alias)}.skippr.state VALUES ($1, $2, $3, $4)`, [
      state.epoch,
      state.loadedSeq,
      state.landedSeq,
      state.layout,
    ])
  }

  /**
   * Writes each part's body to its own file (named by its batch's seq) as the snapshot is read, so
   * at most one batch is held in memory; returns the files grouped by how DuckDB must read them.
   */
  private async writeBatches(
    batches: AsyncIterable<WalBatch>,
    state: PipelineState,
    newest: ReadonlyMap<string, number>,
  ): Promise<{ groups: LoadGroup[]; lastSeq: bigint | undefined }> {
    const groups = new Map<string, LoadGroup>()
    const versions = new SchemaVersions(state)
    let lastSeq: bigint | undefined
    for await (const batch of batches) {
      // Committed after the schemas were read, with a schema newer than the tables: the next refresh has it.
      if (batch.parts.some((p) => p.schemaVersion > (newest.get(p.namespace) ?? 0))) break
      for (const part of batch.parts) {
        if (part.rows === 0) continue
        const key = `${part.namespace}\u0000${part.schemaVersion}\u0000${part.format}`
        let group = groups.get(key)
        if (group === undefined) {
          const fields = (await versions.get(part.namespace, part.schemaVersion)).fields
          group = { namespace: part.namespace, fields, format: part.format, files: [] }
          groups.set(key, group)
        }
        const file = path.join(await this.dir(), `${batch.id.seq}-${++this.files}.${part.format}`)
        await writeFile(file, part.body)
        group.files.push(file)
      }
      lastSeq = batch.id.seq
    }
    return { groups: [...groups.values()], lastSeq }
  }

  private async recreateTables(attached: Attached, schemas: readonly NamespaceSchema[]): Promise<void> {
    const reader = await this.conn.runAndReadAll(
      'SELECT table_name FROM duckdb_tables() WHERE database_name = $1 AND schema_name = $2',
      [attached.alias, 'main'],
    )
    for (const [name] of reader.getRows()) await this.conn.run(`DROP TABLE ${this.table(attached, String(name))}`)
    for (const schema of schemas) {
      const columns = [...schema.fields.map((f) => `${ident(f.name)} ${columnType(f.type)}`), `${SEQ_COLUMN} BIGINT`]
      await this.conn.run(`CREATE TABLE ${this.table(attached, schema.namespace)} (${columns.join(', ')})`)
    }
  }

  private async deleteLanded(attached: Attached, schemas: readonly NamespaceSchema[], landedSeq: bigint): Promise<void> {
    for (const schema of schemas) {
      await this.conn.run(`DELETE FROM ${this.table(attached, schema.namespace)} WHERE ${SEQ_COLUMN} <= $1`, [landedSeq])
    }
  }

  private async load(attached: Attached, group: LoadGroup): Promise<void> {
    const targets = [...group.fields.map((f) => ident(f.name)), SEQ_COLUMN].join(', ')
    const files = `[${group.files.map(literal).join(', ')}]`
    const seq = `CAST(string_split(parse_filename(${FILE_COLUMN}), '-')[1] AS BIGINT)`
    let source: string
    if (group.format === 'csv') {
      // CSV columns are positional: read under neutral names so any field name is safe.
      const positional = group.fields.map((f, i) => ({ name: `c${i}`, type: f.type }))
      source =
        `SELECT ${[...positional.map((c) => c.name), seq].join(', ')} FROM read_csv(${files}, ` +
        `columns = ${columnsStruct(positional)}, header = false, auto_detect = false, delim = ',', quote = '"', ` +
        `escape = '"', allow_quoted_nulls = false, filename = ${literal(FILE_COLUMN)})`
    } else {
      source =
        `SELECT ${[...group.fields.map((f) => ident(f.name)), seq].join(', ')} FROM read_json(${files}, ` +
        `format = 'newline_delimited', records = true, columns = ${columnsStruct(group.fields)}, ` +
        `filename = ${literal(FILE_COLUMN)})`
    }
    await this.conn.run(`INSERT INTO ${this.table(attached, group.namespace)} (${targets}) ${source}`)
  }

  private async createViews(pipeline: string, attached: Attached, schemas: readonly NamespaceSchema[]): Promise<void> {
    await this.conn.run(`DROP SCHEMA IF EXISTS memory.${ident(pipeline)} CASCADE`)
    await this.conn.run(`CREATE SCHEMA memory.${ident(pipeline)}`)
    for (const schema of schemas) {
      const columns = schema.fields.map((f) => ident(f.name)).join(', ')
      await this.conn.run(
        `CREATE VIEW memory.${ident(pipeline)}.${ident(schema.namespace)} AS SELECT ${columns} FROM ${this.table(attached, schema.namespace)}`,
      )
    }
  }

  private table(attached: Attached, namespace: string): string {
    return `${ident(attached.alias)}.main.${ident(namespace)}`
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

  private dir(): Promise<string> {
    this.tempDir ??= mkdtemp(path.join(tmpdir(), 'skippr-query-'))
    return this.tempDir
  }
}

function byNamespace(a: NamespaceSchema, b: NamespaceSchema): number {
  return a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0
}

/** The schema each batch part was written with, read from the state store once per version. */
class SchemaVersions {
  private readonly known = new Map<string, NamespaceSchema>()

  constructor(private readonly state: PipelineState) {}

  async get(namespace: string, version: number): Promise<NamespaceSchema> {
    const key = `${namespace}\u0000${version}`
    const known = this.known.get(key)
    if (known) return known
    const saved = await this.state.getSchema(namespace, version)
    if (!saved) {
      throw new Error(
        `schema version ${version} of namespace '${namespace}' is missing from the state store; the WAL holds rows that need it`,
      )
    }
    const schema = saved.schema as unknown as NamespaceSchema
    this.known.set(key, schema)
    return schema
  }
}
