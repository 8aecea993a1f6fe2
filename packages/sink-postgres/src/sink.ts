import type { Guarantee, Logger, NamespaceSchema, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import {
  alreadyLanded,
  BATCHES_TABLE,
  batchKey,
  cannotLand,
  describeTarget,
  FENCES_TABLE,
  FencedError,
  landed,
  permanent,
  RowCountMismatchError,
  refused,
  retryLater,
} from '@skippr/connector-api'
import pg from 'pg'
import { parse } from 'valibot'
import { breaksConnection, classify, outcomeOf } from './classify.js'
import { type PostgresSinkConfig, type PostgresSinkOptions, postgresSinkConfig } from './config.js'
import { createPool } from './connection.js'
import { isReserved, prepareTable, qualifiedName, tooLongName } from './ddl.js'
import { NameTooLongError, ReservedNameError } from './errors.js'
import { forgetJsonlTable, loadPart } from './load.js'
import { findRefusedRows } from './refused-rows.js'
import { refusesRow } from './savepoint.js'

/**
 * Exactly-once into PostgreSQL: each batch is one transaction that checks the pipeline's fence under
 * a share lock, claims the batch identity in `_skippr_batches`, and COPYs every part. Commit makes
 * rows and identity visible together; a retry finds the identity and writes nothing. A part whose
 * loaded row count differs from its declared one rolls the batch back, fatal. A part whose rows
 * the server refuses for their data rolls it back too, and the answer is `refused`, naming every
 * such row of the batch (refused-rows.ts). Batches of one writer share the fence lock, so up to
 * `concurrent_writes` of them load side by side, each on its own connection (and server process).
 */
export class PostgresSink implements Sink {
  readonly guarantee: Guarantee = 'exactly-once'
  readonly concurrentWrites: number
  private readonly pool: pg.Pool
  private readonly target: string
  /** Namespace → the fields (as JSON) its table was last brought up to by this instance. */
  private readonly prepared = new Map<string, string>()
  /** Pipeline → the fence token this instance has recorded as the pipeline's highest. */
  private readonly raised = new Map<string, bigint>()

  private readonly config: PostgresSinkConfig

  /** `config` as in skippr.yml; keys left out take their defaults. */
  constructor(
    config: PostgresSinkOptions,
    private readonly logger: Logger,
  ) {
    this.config = parse(postgresSinkConfig, config)
    this.concurrentWrites = this.config.concurrent_writes
    // One more connection than writes, so prepare() never waits for a write to finish.
    this.pool = createPool(config.connection_string, this.concurrentWrites + 1)
    this.target = describeTarget(config.connection_string)
  }

  async prepare(schema: NamespaceSchema): Promise<void> {
    const badName = refusedName(schema)
    if (badName) throw permanent(badName)
    try {
      await this.withConnection((client) => this.ensureTable(client, schema))
    } catch (error) {
      const failure = classify(error, { table: this.table(schema.namespace), target: this.target })
      throw failure.retry ? failure.error : permanent(failure.error)
    }
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    for (const part of batch.parts) {
      const badName = refusedName(part.schema)
      if (badName) return cannotLand(badName)
    }
    // The table being worked on, so a failure names it.
    let table = this.table(FENCES_TABLE)
    try {
      return await this.withConnection(async (client) => {
        for (const part of batch.parts) {
          table = this.table(part.namespace)
          await this.ensureTable(client, part.schema)
        }
        table = this.table(FENCES_TABLE)
        return await this.writeBatch(client, batch, (namespace) => {
          table = this.table(namespace)
        })
      })
    } catch (error) {
      return outcomeOf(classify(error, { table, target: this.target }))
    }
  }

  /** Connects; creates nothing (`prepare` creates the schema and tables on the first sync). */
  async check(): Promise<void> {
    await this.read(pg.escapeIdentifier(this.config.schema), (client) => client.query('SELECT 1'))
  }

  async count(namespace: string): Promise<number> {
    const table = this.table(namespace)
    return this.read(table, async (client) =>
      (await exists(client, table)) ? countOf(client, `SELECT count(*) AS n FROM ${table}`) : 0,
    )
  }

  async duplicates(namespace: string, key: readonly string[]): Promise<number> {
    const table = this.table(namespace)
    const columns = key.map((column) => pg.escapeIdentifier(column)).join(', ')
    return this.read(table, async (client) =>
      (await exists(client, table))
        ? countOf(
            client,
            `SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT ${columns} FROM ${table}) AS k) AS n FROM ${table}`,
          )
        : 0,
    )
  }

  async close(): Promise<void> {
    await this.pool.end()
  }

  /** Runs a read on a pooled connection; a failure is thrown as the sink's own error for `table`. */
  private async read<T>(table: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await this.withConnection(work)
    } catch (error) {
      throw classify(error, { table, target: this.target }).error
    }
  }

  /** The batch's one transaction; `onPart` is told which table is being loaded. */
  private async writeBatch(
    client: pg.PoolClient,
    batch: SinkBatch,
    onPart: (namespace: string) => void,
  ): Promise<WriteOutcome> {
    const { pipeline, epoch, seq } = batch.id
    if (this.raised.get(pipeline) !== batch.fence) {
      const highest = await this.raiseFence(client, pipeline, batch.fence)
      if (highest > batch.fence)
        return cannotLand(new FencedError(pipeline, batch.fence, highest, 'PostgreSQL'))
      this.raised.set(pipeline, batch.fence)
    }
    await client.query('BEGIN')
    // The share lock lets this writer's batches run side by side, while a newer writer's raise (an
    // update) waits for them to commit: no batch of a deposed writer commits after it.
    const fence = await client.query<{ token: string }>(
      `SELECT token FROM ${this.table(FENCES_TABLE)} WHERE pipeline = $1 FOR SHARE`,
      [pipeline],
    )
    const highest = fence.rows[0] === undefined ? undefined : BigInt(fence.rows[0].token)
    if (highest !== batch.fence) {
      await client.query('ROLLBACK')
      if (highest !== undefined && highest > batch.fence)
        return cannotLand(new FencedError(pipeline, batch.fence, highest, 'PostgreSQL'))
      // The row was deleted or lowered by hand: raise it again on the retry.
      this.raised.delete(pipeline)
      return retryLater(
        new Error(`the fence row of pipeline ${pipeline} in ${this.table(FENCES_TABLE)} changed`),
      )
    }
    // Claiming the identity up front is also the lookup: a batch that landed before conflicts.
    const marker = await client.query(
      `INSERT INTO ${this.table(BATCHES_TABLE)} (pipeline, epoch, seq) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [pipeline, epoch, seq.toString()],
    )
    if (marker.rowCount === 0) {
      await client.query('COMMIT')
      return alreadyLanded()
    }
    let rows = 0
    for (const part of batch.parts) {
      onPart(part.namespace)
      let loaded: number
      try {
        loaded = await loadPart(client, this.config.schema, part)
      } catch (error) {
        if (!refusesRow(error)) throw error
        return await this.refusedRows(client, batch, error)
      }
      // The server's count of what it loaded, against what the source counted: a record the server
      // read differently (an end-of-data line, a stray quote) must not land as a smaller batch.
      if (loaded !== part.rows) {
        await client.query('ROLLBACK')
        forgetJsonlTable(client)
        return cannotLand(
          new RowCountMismatchError({
            target: `table ${this.table(part.namespace)}`,
            batch: batchKey(batch.id),
            expected: part.rows,
            loaded,
          }),
        )
      }
      rows += loaded
    }
    await client.query('COMMIT')
    this.logger.debug('batch landed', { pipeline, epoch, seq: seq.toString(), rows })
    return landed(rows)
  }

  /**
   * After a part's rows were refused (`cause`): rolls the batch back, finds every refused row of
   * it (refused-rows.ts), and answers `refused` naming them. When none is found alone, the failure
   * was not any one row's: `cause` is thrown, and the batch is fatal as before.
   */
  private async refusedRows(client: pg.PoolClient, batch: SinkBatch, cause: unknown): Promise<WriteOutcome> {
    await client.query('ROLLBACK')
    forgetJsonlTable(client)
    const rows = await findRefusedRows(client, this.config.schema, batch.parts)
    if (rows.length === 0) throw cause
    const { pipeline, epoch, seq } = batch.id
    this.logger.debug('batch rows refused', { pipeline, epoch, seq: seq.toString(), rows: rows.length })
    return refused(rows)
  }

  /**
   * Records `fence` as the pipeline's highest token unless a higher one is there, in a transaction
   * of its own (raising it writes nothing else); returns the highest token.
   */
  private async raiseFence(client: pg.PoolClient, pipeline: string, fence: bigint): Promise<bigint> {
    const { rows } = await client.query<{ token: string }>(
      `INSERT INTO ${this.table(FENCES_TABLE)} AS f (pipeline, token) VALUES ($1, $2)
       ON CONFLICT (pipeline) DO UPDATE SET token = GREATEST(f.token, EXCLUDED.token) RETURNING token`,
      [pipeline, fence.toString()],
    )
    return BigInt(rows[0]?.token ?? 0)
  }

  private async ensureTable(client: pg.PoolClient, schema: NamespaceSchema): Promise<void> {
    const fields = JSON.stringify(schema.fields)
    if (this.prepared.get(schema.namespace) === fields) return
    await prepareTable(client, this.config.schema, schema)
    this.prepared.set(schema.namespace, fields)
  }

  /** Runs `work` on a pooled connection; rolls back on failure and destroys a connection that may be broken. */
  private async withConnection<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect()
    let broken: Error | undefined
    try {
      return await work(client)
    } catch (error) {
      forgetJsonlTable(client)
      if (breaksConnection(error)) broken = error instanceof Error ? error : new Error(String(error))
      else await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release(broken)
    }
  }

  private table(name: string): string {
    return qualifiedName(this.config.schema, name)
  }
}

async function exists(client: pg.PoolClient, table: string): Promise<boolean> {
  const { rows } = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
    table,
  ])
  return rows[0]?.found === true
}

async function countOf(client: pg.PoolClient, sql: string): Promise<number> {
  const { rows } = await client.query<{ n: string }>(sql)
  return Number(rows[0]?.n ?? 0)
}

/** The refusal of a namespace whose names this sink cannot hold as they are; undefined when it can. */
function refusedName(schema: NamespaceSchema): Error | undefined {
  if (isReserved(schema.namespace)) return new ReservedNameError(schema.namespace)
  const long = tooLongName(schema)
  return long === undefined ? undefined : new NameTooLongError(schema.namespace, long)
}
