import type { Guarantee, Logger, NamespaceSchema, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { alreadyLanded, cannotLand, describeTarget, landed, retryLater } from '@skippr/connector-api'
import type pg from 'pg'
import { parse } from 'valibot'
import { breaksConnection, classify, outcomeOf } from './classify.js'
import { type PostgresSinkConfig, type PostgresSinkOptions, postgresSinkConfig } from './config.js'
import { createPool } from './connection.js'
import { BATCHES_TABLE, FENCE_TABLE, isReserved, prepareTable, qualifiedName } from './ddl.js'
import { FencedError, ReservedNameError } from './errors.js'
import { forgetJsonlTable, loadPart } from './load.js'

/**
 * Exactly-once into PostgreSQL: each batch is one transaction that checks the pipeline's fence under
 * a share lock, claims the batch identity in `_skippr_batches`, and COPYs every part. Commit makes
 * rows and identity visible together; a retry finds the identity and writes nothing. Batches of one
 * writer share the fence lock, so up to `concurrent_writes` of them load side by side, each on its
 * own connection (and server process).
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
    if (isReserved(schema.namespace)) throw new ReservedNameError(schema.namespace)
    try {
      await this.withConnection((client) => this.ensureTable(client, schema))
    } catch (error) {
      throw classify(error, { table: this.table(schema.namespace), target: this.target }).error
    }
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    const reserved = batch.parts.find((part) => isReserved(part.namespace))
    if (reserved) return cannotLand(new ReservedNameError(reserved.namespace))
    // The table being worked on, so a failure names it.
    let table = this.table(FENCE_TABLE)
    try {
      return await this.withConnection(async (client) => {
        for (const part of batch.parts) {
          table = this.table(part.namespace)
          await this.ensureTable(client, part.schema)
        }
        table = this.table(FENCE_TABLE)
        return await this.writeBatch(client, batch, (namespace) => {
          table = this.table(namespace)
        })
      })
    } catch (error) {
      return outcomeOf(classify(error, { table, target: this.target }))
    }
  }

  async close(): Promise<void> {
    await this.pool.end()
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
      if (highest > batch.fence) return cannotLand(new FencedError(pipeline, batch.fence, highest))
      this.raised.set(pipeline, batch.fence)
    }
    await client.query('BEGIN')
    // The share lock lets this writer's batches run side by side, while a newer writer's raise (an
    // update) waits for them to commit: no batch of a deposed writer commits after it.
    const fence = await client.query<{ token: string }>(
      `SELECT token FROM ${this.table(FENCE_TABLE)} WHERE pipeline = $1 FOR SHARE`,
      [pipeline],
    )
    const highest = fence.rows[0] === undefined ? undefined : BigInt(fence.rows[0].token)
    if (highest !== batch.fence) {
      await client.query('ROLLBACK')
      if (highest !== undefined && highest > batch.fence)
        return cannotLand(new FencedError(pipeline, batch.fence, highest))
      // The row was deleted or lowered by hand: raise it again on the retry.
      this.raised.delete(pipeline)
      return retryLater(
        new Error(`the fence row of pipeline ${pipeline} in ${this.table(FENCE_TABLE)} changed`),
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
      rows += await loadPart(client, this.config.schema, part)
    }
    await client.query('COMMIT')
    this.logger.debug('batch landed', { pipeline, epoch, seq: seq.toString(), rows })
    return landed(rows)
  }

  /**
   * Records `fence` as the pipeline's highest token unless a higher one is there, in a transaction
   * of its own (raising it writes nothing else); returns the highest token.
   */
  private async raiseFence(client: pg.PoolClient, pipeline: string, fence: bigint): Promise<bigint> {
    const { rows } = await client.query<{ token: string }>(
      `INSERT INTO ${this.table(FENCE_TABLE)} AS f (pipeline, token) VALUES ($1, $2)
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
