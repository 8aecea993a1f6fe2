/**
 * The exactly-once DuckDB sink. One connection per sink; each batch is one transaction that
 * checks the fence, checks the batch identity, bulk-loads every part and records the identity,
 * so a batch lands whole or not at all, and a retried batch that already landed is skipped.
 */
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { ConnectorContext, NamespaceSchema, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { alreadyLanded, batchKey, cannotLand, hasCode, landed, retryLater } from '@skippr/connector-api'
import { DEFAULT_MEMORY_LIMIT, type DuckdbConfig } from './config.js'
import { DuckDBInstance } from './duckdb.js'
import {
  DUCKDB_FENCED,
  DUCKDB_REJECTED,
  DUCKDB_WRITE_FAILED,
  DuckdbFencedError,
  DuckdbRejectedError,
  DuckdbSchemaError,
  DuckdbUnavailableError,
  DuckdbWriteError,
} from './errors.js'
import { batchStatus, ensureLedger, raiseFence, recordLanded } from './ledger.js'
import { LoadFiles, loadPart } from './load.js'
import { literal } from './sql.js'
import { ensureTable, tableName } from './tables.js'

interface Open {
  readonly instance: DuckDBInstance
  readonly conn: DuckDBConnection
  readonly files: LoadFiles
}

/** DuckDB error classes that mean the statement itself cannot succeed, however often it is retried. */
const DATA_ERROR = /^(Conversion|Invalid Input|Constraint|Out of Range|Binder|Parser|Catalog) Error/

export class DuckdbSink implements Sink {
  readonly guarantee = 'exactly-once' as const
  readonly file: string
  private readonly dbSchema: string
  private readonly settings: readonly string[]
  private readonly tempParent: string
  private opened: Promise<Open> | undefined
  /** One connection runs one transaction at a time: calls wait for the previous one. */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(config: DuckdbConfig, context: Pick<ConnectorContext, 'configDir' | 'dataDir'>) {
    this.file = path.resolve(context.configDir, config.path)
    this.dbSchema = config.schema
    this.settings = loadSettings(config)
    this.tempParent = path.join(
      context.dataDir ? path.resolve(context.configDir, context.dataDir) : tmpdir(),
      'tmp',
    )
  }

  prepare(schema: NamespaceSchema): Promise<void> {
    return this.serial(async () => {
      const { conn } = await this.open()
      await transaction(conn, () => ensureTable(conn, this.dbSchema, schema)).catch((error: unknown) => {
        throw new DuckdbSchemaError(tableName(this.dbSchema, schema.namespace), error)
      })
    })
  }

  write(batch: SinkBatch): Promise<WriteOutcome> {
    return this.serial(async () => {
      let open: Open
      try {
        open = await this.open()
      } catch (error) {
        return retryLater(error)
      }
      try {
        return await transaction(open.conn, () => this.land(open, batch))
      } catch (error) {
        if (hasCode(error, DUCKDB_REJECTED) || hasCode(error, DUCKDB_FENCED)) return cannotLand(error)
        if (hasCode(error, DUCKDB_WRITE_FAILED)) return retryLater(error)
        return retryLater(new DuckdbWriteError(`batch ${batchKey(batch.id)}`, error))
      }
    })
  }

  async close(): Promise<void> {
    await this.queue
    const opened = this.opened
    this.opened = undefined
    if (!opened) return
    const open = await opened.catch(() => undefined)
    if (!open) return
    open.conn.closeSync()
    open.instance.closeSync()
    await open.files.remove()
  }

  private async land({ conn, files }: Open, batch: SinkBatch): Promise<WriteOutcome> {
    const status = await batchStatus(conn, this.dbSchema, batch.id)
    if (status.fence !== undefined && status.fence > batch.fence)
      throw new DuckdbFencedError(batch.id.pipeline, batch.fence, status.fence)
    if (status.fence !== batch.fence) await raiseFence(conn, this.dbSchema, batch.id.pipeline, batch.fence)
    if (status.landed) return alreadyLanded()
    let rows = 0
    for (const part of batch.parts) {
      const table = tableName(this.dbSchema, part.namespace)
      try {
        rows += await loadPart(conn, table, part, files)
      } catch (error) {
        const message = error instanceof Error ? error.message : ''
        throw DATA_ERROR.test(message)
          ? new DuckdbRejectedError(table, error)
          : new DuckdbWriteError(`table ${table}`, error)
      }
    }
    await recordLanded(conn, this.dbSchema, batch.id)
    return landed(rows)
  }

  /** Opens the database on first use, so a locked file is a retryable write, not a start-up failure. */
  private open(): Promise<Open> {
    this.opened ??= this.connect().catch((error: unknown) => {
      this.opened = undefined
      throw error
    })
    return this.opened
  }

  private async connect(): Promise<Open> {
    let instance: DuckDBInstance
    try {
      await mkdir(path.dirname(this.file), { recursive: true })
      // Through the instance cache: sinks and readers in one process share one database instance,
      // as DuckDB requires; the file lock still keeps other processes out.
      instance = await DuckDBInstance.fromCache(this.file)
    } catch (error) {
      throw new DuckdbUnavailableError(this.file, error)
    }
    try {
      const conn = await instance.connect()
      for (const setting of this.settings) await conn.run(setting)
      await transaction(conn, () => ensureLedger(conn, this.dbSchema))
      return { instance, conn, files: await LoadFiles.create(this.tempParent) }
    } catch (error) {
      instance.closeSync()
      throw new DuckdbUnavailableError(this.file, error)
    }
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task)
    this.queue = next.catch(() => undefined)
    return next
  }
}

/** The SET statements the sink's connection runs first. */
function loadSettings(config: DuckdbConfig): string[] {
  return [
    // Widening a DATE column to TIMESTAMPTZ must give midnight UTC, whatever the host's zone.
    "SET TimeZone = 'UTC'",
    `SET memory_limit = ${literal(config.memory_limit ?? DEFAULT_MEMORY_LIMIT)}`,
    // Each batch appends its own row groups, the last one partly filled. Merging those at a checkpoint
    // rewrites the table's recent data (most of the time closing the sink took); left alone they cost
    // a little space, and a CHECKPOINT from any other DuckDB session still merges them.
    'SET max_vacuum_tasks = 0',
    // Each load frees its CSV buffers and row-group builders in bulk (tens of MB); by default the
    // allocator keeps up to 512 MB of such memory cached, and a 1M-row sync peaked about 45 MB higher.
    // Returning it after each load costs about 0.1 CPU-second of page faults over that sync.
    "SET allocator_bulk_deallocation_flush_threshold = '32MB'",
    ...(config.threads === undefined ? [] : [`SET threads = ${config.threads}`]),
  ]
}

/** Runs `work` in one transaction: committed when it returns, rolled back when it throws. */
async function transaction<T>(conn: DuckDBConnection, work: () => Promise<T>): Promise<T> {
  await conn.run('BEGIN TRANSACTION')
  let result: T
  try {
    result = await work()
  } catch (error) {
    await conn.run('ROLLBACK')
    throw error
  }
  await conn.run('COMMIT')
  return result
}
