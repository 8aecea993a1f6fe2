/**
 * The exactly-once DuckDB sink. One connection per sink; each batch is one transaction that
 * checks the fence, checks the batch identity, bulk-loads every part (each load's inserted rows
 * checked against the rows its parts declare) and records the identity, so a batch lands whole or
 * not at all, and a retried batch that already landed is skipped.
 *
 * Writes that queue up while the connection is busy (the runner keeps up to `concurrentWrites` in
 * flight) land together: one transaction checks and records every identity and loads each table's
 * parts in one statement. DuckDB loads one statement of two 10 MB batches in about 60% of the time
 * two statements take, because its threads share the work only within a statement. The batches
 * still land whole or not at all, each exactly once; if the shared transaction fails, each batch is
 * tried alone, so each gets its own outcome. A write that queued behind a landing lingers up to
 * LINGER_MS for the runner's next write, which follows as soon as the landing ends, to land with it.
 *
 * Each write is spooled to its load files as soon as it arrives, so a batch waiting its turn is ready
 * when the connection frees, and DuckDB's threads do not wait for the runner between landings.
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type {
  BatchPart,
  ConnectorContext,
  NamespaceSchema,
  Sink,
  SinkBatch,
  WriteOutcome,
} from '@skippr/connector-api'
import {
  alreadyLanded,
  batchKey,
  cannotLand,
  FENCED,
  FencedError,
  hasCode,
  landed,
  makeDirectory,
  permanent,
  ROW_COUNT_MISMATCH,
  RowCountMismatchError,
  refused,
  retryLater,
} from '@skippr/connector-api'
import { dropCachedBlocks } from './cached-blocks.js'
import { DEFAULT_IDLE_CLOSE_SECONDS, DEFAULT_MEMORY_LIMIT, type DuckdbConfig } from './config.js'
import { connectionSettings } from './connection-settings.js'
import { createDatabaseFile } from './database-file.js'
import { type DuckDBInstance, duckdbApi } from './duckdb.js'
import {
  DUCKDB_REJECTED,
  DUCKDB_WRITE_FAILED,
  DuckdbOutOfMemoryError,
  DuckdbRejectedError,
  DuckdbSchemaError,
  DuckdbUnavailableError,
  DuckdbWriteError,
  isOutOfMemory,
  isRowError,
} from './errors.js'
import { checkFile, countInTable, countSql, duplicatesSql, readOnly } from './inspect.js'
import { batchStatuses, batchStatusQuery, ledgerTablesSql, raiseFenceSql, recordLandedSql } from './ledger.js'
import { byTable, LoadFiles, loadParts, recordOutgrewBuffer, type Spooled } from './load.js'
import { refusedRows } from './refusals.js'
import { ensureTable, tableName } from './tables.js'
import { BEGIN, rollBack } from './transaction.js'

interface Open {
  readonly instance: DuckDBInstance
  readonly conn: DuckDBConnection
  readonly files: LoadFiles
}

/**
 * Writes the runner may have in flight: two landing together and one spooled, waiting its turn. With
 * two, the runner reads the next batch from its log only once a landing ends, and DuckDB waits for it.
 */
const CONCURRENT_WRITES = 3
/**
 * How long a write that queued behind a landing waits, once the connection is free, for the runner's
 * next write to land with it. The next one usually follows within a few milliseconds (the runner
 * sends it as soon as the landing ends); landing two batches in one statement saves far more.
 */
const LINGER_MS = 25

interface QueuedWrite {
  readonly batch: SinkBatch
  /** Its parts' load files, written as soon as the write arrived. */
  readonly spooled: Promise<Spooled>
  readonly settle: (outcome: WriteOutcome) => void
  /** It arrived while a landing was in progress. */
  readonly behindLanding: boolean
}

/** A queued write whose load files are ready. */
interface SpooledWrite {
  readonly batch: SinkBatch
  readonly files: Spooled
  readonly settle: (outcome: WriteOutcome) => void
}

/** DuckDB error classes that mean the statement itself cannot succeed, however often it is retried. */
const DATA_ERROR = /^(Conversion|Invalid Input|Constraint|Out of Range|Binder|Parser|Catalog) Error/

export class DuckdbSink implements Sink {
  readonly guarantee = 'exactly-once' as const
  readonly concurrentWrites = CONCURRENT_WRITES
  readonly file: string
  private readonly dbSchema: string
  private readonly settings: readonly string[]
  private readonly tempParent: string
  private opened: Promise<Open> | undefined
  /** A close after an idle spell, in progress: the next open waits for it. */
  private released: Promise<void> | undefined
  private idleTimer: NodeJS.Timeout | undefined
  private readonly idleCloseMs: number
  /** One connection runs one transaction at a time: calls wait for the previous one. */
  private queue: Promise<unknown> = Promise.resolve()
  /** Writes waiting for the connection. */
  private readonly writes: QueuedWrite[] = []
  private landing = false
  /** A turn that lands the queued writes is waiting for the connection (queueLanding). */
  private landingQueued = false
  /** Ends a linger early: called when a write arrives. */
  private arrived: (() => void) | undefined
  /** The connection's preserve_insertion_order setting, once this sink has set it. */
  private preservingOrder: boolean | undefined
  private readonly memoryLimit: string

  constructor(config: DuckdbConfig, context: Pick<ConnectorContext, 'configDir' | 'dataDir'>) {
    this.file = path.resolve(context.configDir, config.path)
    this.dbSchema = config.schema
    this.settings = connectionSettings(config)
    this.memoryLimit = config.memory_limit ?? DEFAULT_MEMORY_LIMIT
    this.idleCloseMs = (config.idle_close_seconds ?? DEFAULT_IDLE_CLOSE_SECONDS) * 1000
    this.tempParent = path.join(
      context.dataDir ? path.resolve(context.configDir, context.dataDir) : tmpdir(),
      'tmp',
    )
  }

  prepare(schema: NamespaceSchema): Promise<void> {
    clearTimeout(this.idleTimer)
    const prepared = this.serial(async () => {
      const { conn } = await this.open()
      await ensureTable(conn, this.dbSchema, schema).catch((error: unknown) => {
        const failure = new DuckdbSchemaError(tableName(this.dbSchema, schema.namespace), error)
        // A statement DuckDB refuses (a column that exists already) is refused again on a retry.
        throw DATA_ERROR.test(error instanceof Error ? error.message : '') ? permanent(failure) : failure
      })
    })
    void prepared.finally(() => this.scheduleIdleClose()).catch(() => {})
    return prepared
  }

  write(batch: SinkBatch): Promise<WriteOutcome> {
    const behindLanding = this.landing
    const spooled = this.spool(batch)
    const written = new Promise<WriteOutcome>((settle) =>
      this.writes.push({ batch, spooled, settle, behindLanding }),
    )
    this.arrived?.()
    clearTimeout(this.idleTimer)
    this.queueLanding()
    return written
  }

  /** Opens the file read-only, or, before the first write, finds its directory writable. */
  check(): Promise<void> {
    return this.serial(async () => (this.opened ? undefined : checkFile(this.file)))
  }

  count(namespace: string): Promise<number> {
    return this.look((conn) => countInTable(conn, this.dbSchema, namespace, countSql))
  }

  duplicates(namespace: string, key: readonly string[]): Promise<number> {
    return this.look((conn) => countInTable(conn, this.dbSchema, namespace, duplicatesSql(key)))
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer)
    await this.queue
    await this.release()
  }

  /**
   * Closes the connection and the instance, so that other processes can open the file (DuckDB lets
   * one process at a time have it). The next write opens it again; `open()` waits for this first.
   */
  private release(): Promise<void> {
    const opened = this.opened
    this.opened = undefined
    this.preservingOrder = undefined
    if (!opened) return this.released ?? Promise.resolve()
    this.released = (async () => {
      const open = await opened.catch(() => undefined)
      if (!open) return
      open.conn.closeSync()
      open.instance.closeSync()
      await open.files.remove()
    })()
    return this.released
  }

  /** After each turn: with nothing left to land, the file is released once idle for idleCloseMs. */
  private scheduleIdleClose(): void {
    clearTimeout(this.idleTimer)
    if (this.writes.length > 0 || this.landing || this.opened === undefined) return
    this.idleTimer = setTimeout(() => {
      void this.serial(async () => {
        if (this.writes.length === 0 && !this.landing) await this.release()
      })
    }, this.idleCloseMs)
    this.idleTimer.unref()
  }

  /** Writes the batch's load files once the database is open; a failure is the write's outcome. */
  private spool(batch: SinkBatch): Promise<Spooled> {
    const spooled = this.open().then(({ files }) =>
      files.spool(batch.parts).catch((error: unknown) => {
        throw new DuckdbWriteError(`the load files of batch ${batchKey(batch.id)}`, error)
      }),
    )
    // Awaited when the write's turn comes.
    spooled.catch(() => {})
    return spooled
  }

  /**
   * Queues a turn on the connection that lands every write queued when it starts, unless one is queued
   * already. Not a turn per write: a landing takes two or three writes, so such turns piled up behind
   * the landings faster than they ran, each holding its write's batch (its closure shares write's
   * scope) long after the batch landed; a sync's memory grew by a batch (about 11 MB) every few landings.
   */
  private queueLanding(): void {
    if (this.landingQueued) return
    this.landingQueued = true
    void this.serial(() => this.landQueued())
      .finally(() => this.scheduleIdleClose())
      .catch(() => {})
  }

  private async landQueued(): Promise<void> {
    if (this.writes.length === 1 && this.writes[0]!.behindLanding) await this.nextWrite(LINGER_MS)
    // A write from here on is not in this turn's landing: it queues the next turn.
    this.landingQueued = false
    const queued = this.writes.splice(0)
    if (queued.length === 0) return
    this.landing = true
    const ready: SpooledWrite[] = []
    let outcomes: WriteOutcome[] = []
    try {
      for (const { batch, spooled, settle } of queued) {
        try {
          ready.push({ batch, files: await spooled, settle })
        } catch (error) {
          settle(retryLater(error))
        }
      }
      if (ready.length > 0) {
        outcomes = await this.landTogether(ready).catch((error: unknown) =>
          ready.map(() => retryLater(error)),
        )
        // Before the outcomes: memory_limit is the instance's, and a reader of it in this process
        // (one that reads what a write landed, once it has) must not meet the evicting limit.
        const open = await this.opened?.catch(() => undefined)
        if (open) await dropCachedBlocks(open.conn, this.memoryLimit)
      }
    } finally {
      // Gone before the outcomes are known: a landed batch leaves no files behind. One that cannot be
      // removed goes with the sink's directory on close, which reports its failure.
      await Promise.all(ready.map(({ files }) => files.release())).catch(() => {})
      this.landing = false
    }
    for (const [i, { settle }] of ready.entries()) settle(outcomes[i]!)
  }

  /** Resolves when another write arrives, or after `ms`. */
  private nextWrite(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      this.arrived = done
      function done(): void {
        clearTimeout(timer)
        resolve()
      }
    }).finally(() => {
      this.arrived = undefined
    })
  }

  /** Lands `writes` in one transaction; when that fails, each alone, so each gets its own outcome. */
  private async landTogether(writes: SpooledWrite[]): Promise<WriteOutcome[]> {
    // Open: the writes' files were spooled into it.
    const { conn } = await this.open()
    if (writes.length > 1) {
      const together = await this.land(conn, writes).catch(() => undefined)
      if (together) return together
    }
    const outcomes: WriteOutcome[] = []
    for (const write of writes) outcomes.push(await this.landAlone(conn, write))
    return outcomes
  }

  private async landAlone(
    conn: DuckDBConnection,
    write: SpooledWrite,
    longRecords = false,
  ): Promise<WriteOutcome> {
    const { batch } = write
    try {
      const [outcome] = await this.land(conn, [write], longRecords)
      return outcome!
    } catch (error) {
      if (!longRecords && recordOutgrewBuffer(error)) return this.landAlone(conn, write, true)
      if (isOutOfMemory(error))
        return cannotLand(new DuckdbOutOfMemoryError(batchKey(batch.id), this.memoryLimit, error))
      if (hasCode(error, DUCKDB_REJECTED) && isRowError((error as Error).cause))
        return this.refusedOr(conn, write, error)
      if (hasCode(error, DUCKDB_REJECTED) || hasCode(error, FENCED) || hasCode(error, ROW_COUNT_MISMATCH))
        return cannotLand(error)
      if (hasCode(error, DUCKDB_WRITE_FAILED)) return retryLater(error)
      return retryLater(new DuckdbWriteError(`batch ${batchKey(batch.id)}`, error))
    }
  }

  /**
   * After a load refused for the data of some rows: `refused` naming every one, or `fatal` with the
   * load's error when no rows explain it (refusals.ts). A search that fails (I/O) is a `retry`.
   * When no rows explain it, the load is tried once more first: a constraint of the ledger's that
   * another writer of the same pipeline won in the meantime (its fence or identity row) is gone then.
   */
  private async refusedOr(
    conn: DuckDBConnection,
    write: SpooledWrite,
    error: unknown,
  ): Promise<WriteOutcome> {
    const { batch } = write
    try {
      const { files } = await this.open()
      const rows = await refusedRows({ conn, files, dbSchema: this.dbSchema }, batch)
      if (rows) return refused(rows)
      const [again] = await this.land(conn, [write]).catch(() => [undefined])
      return again ?? cannotLand(error)
    } catch (searchError) {
      return retryLater(new DuckdbWriteError(`the refused rows of batch ${batchKey(batch.id)}`, searchError))
    }
  }

  /**
   * Lands the batches that did not land before, in one transaction of three round trips: BEGIN with
   * the ledger's statuses, the load (with the fence, when it must be raised), and the identities with
   * COMMIT. Rolled back when any of it fails.
   */
  private async land(
    conn: DuckDBConnection,
    writes: readonly SpooledWrite[],
    longRecords = false,
  ): Promise<WriteOutcome[]> {
    try {
      const statuses = batchStatuses(
        await conn.run(
          `${BEGIN}${batchStatusQuery(
            this.dbSchema,
            writes.map(({ batch }) => batch.id),
          )}`,
        ),
        writes.length,
      )
      const toLand: SinkBatch[] = []
      const outcomes: WriteOutcome[] = []
      const fences = new Map<string, bigint | undefined>()
      const raises: string[] = []
      for (const [i, { batch }] of writes.entries()) {
        const { pipeline } = batch.id
        const fence = fences.has(pipeline) ? fences.get(pipeline) : statuses[i]!.fence
        if (fence !== undefined && fence > batch.fence)
          throw new FencedError(pipeline, batch.fence, fence, 'DuckDB')
        if (fence !== batch.fence) raises.push(raiseFenceSql(this.dbSchema, pipeline, batch.fence))
        fences.set(pipeline, batch.fence)
        if (statuses[i]!.landed) outcomes.push(alreadyLanded())
        else {
          toLand.push(batch)
          outcomes.push(landed(batch.parts.reduce((rows, part) => rows + part.rows, 0)))
        }
      }
      const paths = new Map(writes.flatMap(({ files }) => [...files.paths]))
      await this.load(conn, toLand, paths, raises, longRecords)
      const ids = toLand.map((batch) => batch.id)
      const record = ids.length > 0 ? `${recordLandedSql(this.dbSchema, ids)}; ` : ''
      await conn.run(`${record}COMMIT`)
      return outcomes
    } catch (error) {
      return rollBack(conn, error)
    }
  }

  /** Loads the batches' parts, one statement per table, the first sent with the statements `before`. */
  private async load(
    conn: DuckDBConnection,
    batches: readonly SinkBatch[],
    paths: ReadonlyMap<BatchPart, string>,
    before: readonly string[],
    longRecords: boolean,
  ): Promise<void> {
    const setting = this.orderSetting(batches.length < 2)
    // Unknown until the statement that changes it succeeds.
    if (setting) this.preservingOrder = undefined
    let leading: string | undefined = [...before, ...(setting ? [setting.sql] : [])].join('; ') || undefined
    const batchOf = new Map(batches.flatMap((batch) => batch.parts.map((part) => [part, batch.id])))
    const tables = byTable(batches.flatMap((batch) => batch.parts))
    if (tables.length === 0 && leading) await conn.run(leading)
    for (const parts of tables) {
      const table = tableName(this.dbSchema, parts[0]!.namespace)
      let loaded: number
      try {
        loaded = await loadParts(conn, table, parts, paths, leading, longRecords)
      } catch (error) {
        const message = error instanceof Error ? error.message : ''
        throw DATA_ERROR.test(message)
          ? new DuckdbRejectedError(table, error)
          : new DuckdbWriteError(`table ${table}`, error)
      }
      // DuckDB's count of the rows its statement inserted, against what the sources counted: a record
      // it read differently must not land as a smaller (or larger) batch. The transaction rolls back.
      const expected = parts.reduce((rows, part) => rows + part.rows, 0)
      if (loaded !== expected) {
        const keys = new Set(parts.map((part) => batchKey(batchOf.get(part)!)))
        throw new RowCountMismatchError({
          target: `table ${table}`,
          batch: [...keys].join(', '),
          expected,
          loaded,
        })
      }
      leading = undefined
    }
    if (setting) this.preservingOrder = setting.preserve
  }

  /**
   * Rows have no order to keep, but keeping it is faster for one file (about 10%), and turning it off
   * lets DuckDB's threads split a statement over several files (without, two files load one at a time).
   * The SET statement goes with the load, when the connection's setting must change.
   */
  private orderSetting(preserve: boolean): { sql: string; preserve: boolean } | undefined {
    if (this.preservingOrder === preserve) return undefined
    return { sql: `SET preserve_insertion_order = ${preserve}`, preserve }
  }

  /** Opens the database on first use, so a locked file is a retryable write, not a start-up failure. */
  private open(): Promise<Open> {
    this.opened ??= (this.released ?? Promise.resolve())
      .then(() => this.connect())
      .catch((error: unknown) => {
        this.opened = undefined
        throw error
      })
    return this.opened
  }

  private async connect(): Promise<Open> {
    let instance: DuckDBInstance
    try {
      await makeDirectory(path.dirname(this.file))
      await createDatabaseFile(this.file)
      // Through the instance cache: sinks and readers in one process share one database instance,
      // as DuckDB requires; the file lock still keeps other processes out.
      instance = await duckdbApi().DuckDBInstance.fromCache(this.file)
    } catch (error) {
      throw new DuckdbUnavailableError(this.file, error)
    }
    let conn: DuckDBConnection | undefined
    try {
      conn = await instance.connect()
      await conn.run([...this.settings, `${BEGIN}${ledgerTablesSql(this.dbSchema)}`, 'COMMIT'].join('; '))
      return { instance, conn, files: await LoadFiles.create(this.tempParent) }
    } catch (error) {
      // An open connection keeps the cached instance alive, and the next fromCache of this file
      // would wait for it to go: a busy loop in DuckDB's instance cache, for ever.
      conn?.closeSync()
      instance.closeSync()
      throw new DuckdbUnavailableError(this.file, error)
    }
  }

  /** A read on the sink's connection when it is open (between its transactions), else read-only. */
  private look(work: (conn: DuckDBConnection) => Promise<number>): Promise<number> {
    return this.serial(async () =>
      this.opened ? work((await this.opened).conn) : readOnly(this.file, 0, work),
    )
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task)
    this.queue = next.catch(() => undefined)
    return next
  }
}
