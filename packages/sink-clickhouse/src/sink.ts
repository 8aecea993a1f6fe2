import type {
  Guarantee,
  Logger,
  NamespaceSchema,
  RefusedRow,
  Sink,
  SinkBatch,
  WriteOutcome,
} from '@skippr/connector-api'
import {
  alreadyLanded,
  batchKey,
  cannotLand,
  describeTarget,
  landed,
  partKey,
  permanent,
  refused,
} from '@skippr/connector-api'
import { parse } from 'valibot'
import { classify, type Failure, outcomeOf } from './classify.js'
import type { Column } from './column-types.js'
import { type ClickhouseSinkConfig, type ClickhouseSinkOptions, clickhouseSinkConfig } from './config.js'
import { Connection } from './connection.js'
import { BATCHES_TABLE, prepareDatabase, prepareTable, schemaProblem } from './ddl.js'
import { encodePart } from './encode-part.js'
import { hasLanded, recordLanded } from './ledger.js'
import { supportsDeduplicationToken } from './server-version.js'
import { qualifiedName } from './sql.js'

/**
 * At-least-once into ClickHouse, which has no transactions: every part of a batch is checked and
 * encoded first (a count mismatch is fatal, values a column cannot hold are refused, nothing sent),
 * then the ledger is asked whether the batch landed before; if not, each part is one RowBinary
 * insert, tagged with its part key, and the ledger row follows. A crash between the inserts and the
 * ledger row lands the batch again on retry: on MergeTree as a tagged copy, on ReplicatedMergeTree
 * dropped by the server as a repeated block (README, Guarantee).
 */
export class ClickhouseSink implements Sink {
  readonly guarantee: Guarantee = 'at-least-once'
  private readonly config: ClickhouseSinkConfig
  private readonly connection: Connection
  private readonly target: string
  /** Namespace → the fields (as JSON) its table was brought up to, and its columns then. */
  private readonly prepared = new Map<string, { fields: string; columns: Column[] }>()
  private databaseReady = false

  /** `config` as in skippr.yml; keys left out take their defaults. */
  constructor(
    config: ClickhouseSinkOptions,
    private readonly logger: Logger,
  ) {
    this.config = parse(clickhouseSinkConfig, config)
    this.connection = new Connection(this.config)
    this.target = describeTarget(this.config.url)
  }

  async prepare(schema: NamespaceSchema): Promise<void> {
    const problem = schemaProblem(schema, this.config)
    if (problem) throw permanent(problem)
    try {
      await this.ensureTable(schema)
    } catch (error) {
      const failure = this.classify(error, schema.namespace)
      throw failure.retry ? failure.error : permanent(failure.error)
    }
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    for (const part of batch.parts) {
      const problem = schemaProblem(part.schema, this.config)
      if (problem) return cannotLand(problem)
    }
    // The table being worked on, so that a failure names it.
    let table = BATCHES_TABLE
    try {
      const inserts: { sql: string; body: Uint8Array; rows: number }[] = []
      const refusals: RefusedRow[] = []
      for (const [index, part] of batch.parts.entries()) {
        table = part.namespace
        const encoded = encodePart(part, {
          index,
          key: partKey(batch.id, index),
          batch: batchKey(batch.id),
          table: this.table(part.namespace),
          columns: await this.ensureTable(part.schema),
          target: this.target,
        })
        if ('error' in encoded) return cannotLand(encoded.error)
        refusals.push(...encoded.refused)
        inserts.push(encoded)
      }
      if (refusals.length > 0) return refused(refusals)
      table = BATCHES_TABLE
      if (await hasLanded(this.connection, this.config.database, batch.id)) return alreadyLanded()
      const withToken = supportsDeduplicationToken(await this.connection.serverVersion())
      let rows = 0
      for (const [index, insert] of inserts.entries()) {
        table = batch.parts[index]?.namespace ?? table
        if (insert.rows === 0) continue
        const settings = withToken
          ? { ...this.config.settings, insert_deduplication_token: partKey(batch.id, index) }
          : this.config.settings
        await this.connection.insert(insert.sql, insert.body, settings)
        rows += insert.rows
      }
      table = BATCHES_TABLE
      await recordLanded(this.connection, this.config.database, batch.id)
      this.logger.debug('batch landed', { batch: batchKey(batch.id), rows })
      return landed(rows)
    } catch (error) {
      return outcomeOf(this.classify(error, table))
    }
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => {})
  }

  private async ensureTable(schema: NamespaceSchema): Promise<Column[]> {
    const fields = JSON.stringify(schema.fields)
    const known = this.prepared.get(schema.namespace)
    if (known?.fields === fields) return known.columns
    if (!this.databaseReady) {
      await prepareDatabase(this.connection, this.config)
      this.databaseReady = true
    }
    const columns = await prepareTable(this.connection, this.config, schema)
    this.prepared.set(schema.namespace, { fields, columns })
    return columns
  }

  private classify(error: unknown, table: string): Failure {
    return classify(error, { table: this.table(table), target: this.target, user: this.config.username })
  }

  private table(name: string): string {
    return qualifiedName(this.config.database, name)
  }
}
