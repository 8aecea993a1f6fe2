/**
 * One query session: an in-memory DuckDB where every pipeline in skippr.yml is a schema of views
 * over its WAL (snapshot.ts), and over its DuckDB warehouse when that is its data_sink
 * (destination.ts), plus the admin statements (admin.ts). Before each SQL statement the pipelines
 * are brought up to a fresh snapshot, so a statement sees the batches committed by the time it
 * started — each pipeline consistently — and nothing of a batch still being committed. Warehouses
 * are attached for one statement: once its rows are read (or it failed) they are let go.
 */
import {
  type DuckDBConnection,
  DuckDBInstance,
  type DuckDBResult,
  DuckDBTypeId,
  type DuckDBValue,
} from '@duckdb/node-api'
import { ident } from '@skippr/sink-duckdb'
import type { Logger } from 'pino'
import type { ConfigFile } from '../config/load.js'
import type { RuntimeFlags } from '../config/settings.js'
import { neverRanHere } from '../runner/state-store.js'
import { runAdmin } from './admin.js'
import { PipelineCatalog } from './catalog.js'
import { NamespaceNotFoundError, QueryFailedError } from './errors.js'
import { SEQ_COLUMN } from './load.js'
import { type Cell, rowsOf, type StatementResult } from './result.js'
import { WalTables } from './snapshot.js'
import { isShowDocs, STATEMENT_DOCS } from './statement-docs.js'
import { parseAdminStatement, stripComments } from './statements.js'
import { type Look, parseStreamStatement, type StreamStatement, tail } from './stream.js'

export interface QuerySessionOptions {
  readonly file: ConfigFile
  readonly flags: RuntimeFlags
  readonly cwd: string
  /** Non-fatal problems (a query cache that cannot be used). */
  readonly warn: (message: string) => void
  /**
   * What the operator must see with the rows: a pipeline showing only its WAL rows because its
   * warehouse cannot be opened. Defaults to `warn`.
   */
  readonly notice?: (message: string) => void
  /** Where admin statements log what they did. */
  readonly logger: Logger
  /** Registers secret values (a deadletter sink's) for redaction. */
  readonly onSecrets: (secrets: readonly string[]) => void
}

const NUMERIC_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.FLOAT,
  DuckDBTypeId.DOUBLE,
  DuckDBTypeId.DECIMAL,
])

export class QuerySession {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
    readonly catalog: PipelineCatalog,
    private readonly tables: WalTables,
  ) {}

  static async open(options: QuerySessionOptions): Promise<QuerySession> {
    const instance = await DuckDBInstance.create(':memory:')
    const conn = await instance.connect()
    // The WAL's timestamps carry an offset; show them in UTC, as the DuckDB sink stores them.
    await conn.run("SET TimeZone = 'UTC'")
    const persistent = (options.file.env.SKIPPR_QUERY_CACHE ?? 'on').toLowerCase() !== 'off'
    const tables = new WalTables(conn, {
      persistent,
      warn: options.warn,
      notice: options.notice ?? options.warn,
    })
    return new QuerySession(
      instance,
      conn,
      new PipelineCatalog(options.file, options.flags, options.cwd, options.logger, options.onSecrets),
      tables,
    )
  }

  /**
   * Runs one statement (without its `;`). Rows must be read before the next statement runs. A
   * STREAM's rows keep coming until `signal` aborts (or its LIMIT is met).
   */
  async execute(text: string, options: { readonly signal?: AbortSignal } = {}): Promise<StatementResult> {
    const stripped = stripComments(text).trim()
    if (isShowDocs(stripped)) {
      const rows = STATEMENT_DOCS.map((doc) => [doc.command, doc.syntax, doc.summary, doc.example])
      return rowsOf(['statement', 'syntax', 'summary', 'example'], [false, false, false, false], rows)
    }
    const stream = parseStreamStatement(stripped)
    if (stream !== undefined) return this.stream(stream, options.signal ?? new AbortController().signal)
    const admin = parseAdminStatement(text)
    if (admin !== undefined) {
      // DROP deletes the pipeline's cache file: stop using it first.
      if (admin.kind === 'drop') await this.tables.forget(admin.pipeline)
      return runAdmin(admin, this.catalog)
    }
    return this.sql(text, this.catalog.names())
  }

  /** Runs SQL after refreshing the named pipelines (every one a statement may read). */
  async sql(text: string, pipelines: readonly string[]): Promise<StatementResult> {
    let result: DuckDBResult
    try {
      await this.refresh(pipelines)
      result = await this.conn.stream(text).catch((error: unknown) => {
        throw new QueryFailedError(error)
      })
    } catch (error) {
      await this.tables.release()
      throw error
    }
    const header = result.columnNames()
    const numeric = header.map((_, i) => NUMERIC_TYPES.has(result.columnTypeId(i)))
    return { kind: 'rows', header, numeric, chunks: cells(result, () => this.tables.release()) }
  }

  /** STREAM (stream.ts): the first look runs now, so a bad column or WHERE fails the statement at once. */
  private async stream(statement: StreamStatement, signal: AbortSignal): Promise<StatementResult> {
    const { pipeline, namespace } = statement
    if (!neverRanHere(this.catalog.settings(pipeline))) {
      const { state } = await this.catalog.open(pipeline)
      const namespaces = (await state.listSchemas()).map((s) => s.namespace)
      if (!namespaces.includes(namespace)) throw new NamespaceNotFoundError(pipeline, namespace, namespaces)
    }
    let header: readonly string[] = []
    const look: Look = async (afterSeq, limit) => {
      await this.refresh([pipeline])
      try {
        const table = this.tables.pendingTable(pipeline, namespace)
        if (table === undefined) throw new NamespaceNotFoundError(pipeline, namespace, [])
        const newest = await this.conn.runAndReadAll(`SELECT max(${SEQ_COLUMN}) FROM ${table}`)
        const loaded = newest.getRows()[0]?.[0]
        const seq = typeof loaded === 'bigint' && loaded > afterSeq ? loaded : afterSeq
        // The fields of the batches after the last look, in commit order, as the namespace's table.
        const batches = `SELECT * EXCLUDE (${SEQ_COLUMN}) FROM ${table} WHERE ${SEQ_COLUMN} > ${afterSeq} AND ${SEQ_COLUMN} <= ${seq} ORDER BY ${SEQ_COLUMN}`
        const sql = [
          `SELECT ${statement.columns} FROM (${batches}) AS ${ident(namespace)}`,
          statement.where && `WHERE ${statement.where}`,
          statement.orderBy && `ORDER BY ${statement.orderBy}`,
          limit !== undefined && `LIMIT ${limit}`,
        ]
          .filter(Boolean)
          .join(' ')
        const reader = await this.conn.runAndReadAll(sql).catch((error: unknown) => {
          throw new QueryFailedError(error)
        })
        header = reader.columnNames()
        return { rows: reader.getRows().map((row) => row.map(cell)), seq }
      } finally {
        await this.tables.release()
      }
    }
    const first = await look(-1n, statement.limit)
    return { kind: 'stream', header, chunks: tail(look, first, statement.limit, signal) }
  }

  /** Brings the given pipelines' tables up to a fresh snapshot of their WALs (and warehouses). */
  async refresh(names: readonly string[]): Promise<void> {
    // The last statement's rows may not have been read to the end: its warehouses are still attached.
    await this.tables.release()
    for (const name of names) {
      const settings = this.catalog.settings(name)
      // A pipeline that never ran has no saved state: nothing to show, and nothing to create for it.
      if (neverRanHere(settings)) {
        await this.conn.run(`CREATE SCHEMA IF NOT EXISTS memory.${ident(name)}`)
        continue
      }
      const pipeline = await this.catalog.open(name)
      await this.tables.refresh(pipeline, () => this.catalog.warehouse(settings))
    }
  }

  async close(): Promise<void> {
    try {
      await this.tables.close()
      await this.catalog.close()
    } finally {
      this.conn.closeSync()
      this.instance.closeSync()
    }
  }
}

async function* cells(result: DuckDBResult, done: () => Promise<void>): AsyncGenerator<Cell[][]> {
  try {
    for await (const rows of result.yieldRows()) yield rows.map((row) => row.map(cell))
  } catch (error) {
    throw new QueryFailedError(error)
  } finally {
    await done()
  }
}

function cell(value: DuckDBValue): Cell {
  return value === null ? null : String(value)
}
