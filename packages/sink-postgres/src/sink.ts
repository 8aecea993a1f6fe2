import type { Guarantee, Logger, NamespaceSchema, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { alreadyLanded, cannotLand, describeTarget, landed } from '@skippr/connector-api'
import type pg from 'pg'
import { breaksConnection, classify, outcomeOf } from './classify.js'
import type { PostgresSinkConfig } from './config.js'
import { createPool } from './connection.js'
import { BATCHES_TABLE, FENCE_TABLE, isReserved, prepareTable, qualifiedName } from './ddl.js'
import { FencedError, ReservedNameError } from './errors.js'
import { forgetJsonlTable, loadPart } from './load.js'

/**
 * Exactly-once into PostgreSQL: each batch is one transaction that raises the pipeline's fence,
 * claims the batch identity in `_skippr_batches`, and COPYs every part. Commit makes rows and
 * identity visible together; a retry finds the identity and writes nothing.
 */
export class PostgresSink implements Sink {
  readonly guarantee: Guarantee = 'exactly-once'
  private readonly pool: pg.Pool
  private readonly target: string
  /** Namespace → the fields (as JSON) its table was last brought up to by this instance. */
  private readonly prepared = new Map<string, string>()

  constructor(
    private readonly config: PostgresSinkConfig,
    private readonly logger: Logger,
  ) {
    this.pool = createPool(config.connection_string)
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
    await client.query('BEGIN')
    // The upsert locks the fence row (as SELECT … FOR UPDATE would) until commit, so writers of one
    // pipeline take turns, and it returns the highest token seen.
    const fence = await client.query<{ token: string }>(
      `INSERT INTO ${this.table(FENCE_TABLE)} AS f (pipeline, token) VALUES ($1, $2)
       ON CONFLICT (pipeline) DO UPDATE SET token = GREATEST(f.token, EXCLUDED.token) RETURNING token`,
      [pipeline, batch.fence.toString()],
    )
    const highest = BigInt(fence.rows[0]?.token ?? 0)
    if (highest > batch.fence) {
      await client.query('ROLLBACK')
      return cannotLand(new FencedError(pipeline, batch.fence, highest))
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
