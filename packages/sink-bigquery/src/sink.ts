import { randomUUID } from 'node:crypto'
import type { BigQuery, TableField } from '@google-cloud/bigquery'
import type {
  Field,
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
  BATCHES_TABLE,
  batchKey,
  cannotLand,
  FencedError,
  landed,
  permanent,
  RowCountMismatchError,
  refused,
  retryLater,
} from '@skippr/connector-api'
import { parse } from 'valibot'
import { createClient } from './client.js'
import { type BigquerySinkConfig, type BigquerySinkOptions, bigquerySinkConfig } from './config.js'
import { BIGQUERY_REFUSED, BigqueryError, classify, httpStatus, jobFailure } from './errors.js'
import { outOfRangeInts } from './int-range.js'
import { LEDGER_FIELDS, Ledger, type LedgerStatus, type StagedPart } from './ledger.js'
import { runLoad } from './load.js'
import { ident, loadJobId, stagingTable, tablePath } from './names.js'
import { findRefusedRows, refusedForData } from './refused.js'
import { changeFor, columnType, rewriteExpression, standardType } from './types.js'

/**
 * Exactly-once into BigQuery. Each part is loaded into a staging table by a load job whose id comes
 * from the batch identity and the part's bytes (a retry finds the job: 409, then jobs.get); then one
 * multi-statement transaction claims the identity in `_skippr_batches` (unless it, or a higher fence
 * token, is there) and copies the staged rows, so rows and identity commit together. See the README.
 */
export class BigquerySink implements Sink {
  readonly guarantee: Guarantee = 'exactly-once'
  private readonly config: BigquerySinkConfig
  private readonly client: BigQuery
  private readonly ledger: Ledger
  /** Table name (lower case) → its columns' standard types by lower-case name, as last seen. */
  private readonly tables = new Map<string, Map<string, { name: string; type: string }>>()
  private ready = false

  /** `config` as in skippr.yml; keys left out take their defaults. */
  constructor(
    config: BigquerySinkOptions,
    private readonly logger: Logger,
  ) {
    this.config = parse(bigquerySinkConfig, config)
    this.client = createClient(this.config)
    this.ledger = new Ledger(this.client, this.config.project, this.config.dataset, this.config.location)
  }

  async prepare(schema: NamespaceSchema): Promise<void> {
    try {
      await this.ensureTable(schema)
    } catch (error) {
      const failure = classify(error, this.target(schema.namespace))
      throw failure.retryable ? failure : permanent(failure)
    }
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    let target = this.target(BATCHES_TABLE)
    const staged: StagedPart[] = []
    /** Whether the transaction's script ran, which drops the staging tables itself. */
    let committed = false
    try {
      await this.ensureReady()
      // The ledger is not read first: the transaction tells a batch landed before, or fenced, and
      // a batch that lands spends no round trip on asking (a retried one loads its parts again).
      const refusals: RefusedRow[] = []
      let rows = 0
      for (const [index, part] of batch.parts.entries()) {
        target = this.target(part.namespace)
        const fields = await this.stagingFields(part.schema)
        const jobId = loadJobId({ ...batch.id, part: index }, part.namespace, part.body)
        const staging = stagingTable(jobId)
        staged.push({ table: part.namespace, staging, columns: fields.map((f) => f.name as string) })
        const request = {
          dataset: this.config.dataset,
          table: staging,
          jobId,
          format: part.format,
          fields,
          body: part.body,
        }
        let result = await runLoad(this.client, request)
        // A job found again whose staging table is gone (dropped after a refusal, or expired): its
        // rows are loaded again; the ledger, not the job id, is what keeps them from landing twice.
        if (result.reused && result.ok && !(await this.exists(staging)))
          result = await runLoad(this.client, { ...request, jobId: `${jobId}_${randomUUID().slice(0, 8)}` })
        const outOfRange = outOfRangeInts(index, part)
        if (!result.ok) {
          if (!refusedForData(result)) throw jobFailure(result.errorResult)
          const found = await findRefusedRows(this.client, this.config.dataset, index, part, fields)
          if (found.length === 0) throw jobFailure(result.errorResult)
          refusals.push(...mergeRefusals(found, outOfRange))
          continue
        }
        if (outOfRange.length > 0) {
          refusals.push(...outOfRange)
          continue
        }
        // BigQuery's count of what it read, against the source's: a record read differently must
        // not land as a smaller (or larger) batch.
        if (result.outputRows !== part.rows)
          return cannotLand(
            new RowCountMismatchError({
              target: `table ${target}`,
              batch: batchKey(batch.id),
              expected: part.rows,
              loaded: result.outputRows,
            }),
          )
        rows += part.rows
      }
      if (refusals.length > 0) return refused(refusals)

      target = this.target(BATCHES_TABLE)
      const attempt = randomUUID()
      let after: LedgerStatus
      try {
        after = await this.ledger.commit(batch.id, batch.fence, attempt, staged)
      } catch (error) {
        if (httpStatus(error) !== 404) throw error
        // A staging table gone: dropped by an earlier run of this very script whose answer was lost
        // (the SDK resends it), or expired. The retry loads the parts again; the ledger decides.
        return retryLater(
          new Error(`BigQuery ${target}: a staging table was gone at commit; the parts will be loaded again`),
        )
      }
      committed = true
      if (after.attempt === attempt) {
        this.logger.debug('batch landed', { pipeline: batch.id.pipeline, seq: batch.id.seq.toString(), rows })
        return landed(rows)
      }
      if (after.attempt !== undefined) return alreadyLanded()
      if (after.highest !== undefined && after.highest > batch.fence) return this.fenced(batch, after.highest)
      return retryLater(
        new Error(`BigQuery ${target}: the batch was neither recorded nor refused; will retry`),
      )
    } catch (error) {
      const failure = classify(error, target)
      return failure.retryable ? retryLater(failure) : cannotLand(failure)
    } finally {
      if (!committed) await this.dropStaging(staged)
    }
  }

  /** Reads the dataset; creates nothing. */
  async check(): Promise<void> {
    try {
      await this.client.dataset(this.config.dataset).getMetadata()
    } catch (error) {
      throw classify(error, `dataset ${this.config.project}.${this.config.dataset}`)
    }
  }

  async count(namespace: string): Promise<number> {
    return this.scalar(namespace, (table) => `SELECT COUNT(*) AS n FROM ${table}`)
  }

  async duplicates(namespace: string, key: readonly string[]): Promise<number> {
    const columns = key.map(ident).join(', ')
    return this.scalar(
      namespace,
      (table) =>
        `SELECT COUNT(*) - (SELECT COUNT(*) FROM (SELECT DISTINCT ${columns} FROM ${table})) AS n FROM ${table}`,
    )
  }

  async close(): Promise<void> {}

  private async scalar(namespace: string, sql: (table: string) => string): Promise<number> {
    try {
      const [exists] = await this.client.dataset(this.config.dataset).table(namespace).exists()
      if (!exists) return 0
      const [rows] = await this.client.query({
        query: sql(this.path(namespace)),
        location: this.config.location,
      })
      return Number((rows[0] as { n?: unknown } | undefined)?.n ?? 0)
    } catch (error) {
      throw classify(error, this.target(namespace))
    }
  }

  private fenced(batch: SinkBatch, highest: bigint): WriteOutcome {
    return cannotLand(
      new FencedError(batch.id.pipeline, batch.fence, highest, `BigQuery ${this.target(BATCHES_TABLE)}`),
    )
  }

  /** The dataset (created if missing and allowed) and the ledger table, once per instance. */
  private async ensureReady(): Promise<void> {
    if (this.ready) return
    const dataset = this.client.dataset(this.config.dataset)
    try {
      await dataset.getMetadata()
    } catch (error) {
      if (httpStatus(error) !== 404) throw error
      if (!this.config.create_dataset)
        throw permanent(
          new BigqueryError(
            BIGQUERY_REFUSED,
            `BigQuery dataset ${this.config.project}.${this.config.dataset} does not exist and create_dataset is false; create it or set create_dataset: true`,
            'notFound',
            false,
          ),
        )
      await ignoreExisting(dataset.create({ location: this.config.location }))
    }
    await this.createTable(BATCHES_TABLE, LEDGER_FIELDS)
    this.ready = true
  }

  private async createTable(name: string, fields: TableField[]): Promise<void> {
    const table = this.client.dataset(this.config.dataset).table(name)
    const [exists] = await table.exists()
    if (!exists) await ignoreExisting(table.create({ schema: { fields } }))
  }

  /** The table's columns, read from BigQuery unless this instance knows them. */
  private async columns(namespace: string): Promise<Map<string, { name: string; type: string }> | undefined> {
    const known = this.tables.get(namespace.toLowerCase())
    if (known) return known
    const table = this.client.dataset(this.config.dataset).table(namespace)
    try {
      const [metadata] = await table.getMetadata()
      const fields = (metadata.schema?.fields ?? []) as TableField[]
      const columns = new Map(
        fields.map((f) => [
          String(f.name).toLowerCase(),
          { name: String(f.name), type: standardType(f.type) },
        ]),
      )
      this.tables.set(namespace.toLowerCase(), columns)
      return columns
    } catch (error) {
      if (httpStatus(error) === 404) return undefined
      throw error
    }
  }

  /** Creates the table, adds missing columns, widens columns: what `prepare` promises. */
  private async ensureTable(schema: NamespaceSchema): Promise<void> {
    await this.ensureReady()
    this.tables.delete(schema.namespace.toLowerCase())
    const columns = await this.columns(schema.namespace)
    const table = this.client.dataset(this.config.dataset).table(schema.namespace)
    if (!columns) {
      await ignoreExisting(table.create({ schema: { fields: schema.fields.map(tableField) } }))
      this.tables.delete(schema.namespace.toLowerCase())
      return
    }
    const added = schema.fields.filter((f) => !columns.has(f.name.toLowerCase()))
    const alters: string[] = []
    const rewrites: string[] = []
    for (const field of schema.fields) {
      const column = columns.get(field.name.toLowerCase())
      if (!column) continue
      const change = changeFor(column.type, field.type)
      if (change === 'refused')
        throw new BigqueryError(
          BIGQUERY_REFUSED,
          `BigQuery ${this.target(schema.namespace)}: column ${column.name} is ${column.type}, which cannot hold field ${field.name} (${field.type}, a ${columnType(field.type)}); change the column or the source`,
          'invalid',
          false,
        )
      if (change === 'alter')
        alters.push(
          `ALTER TABLE ${this.path(schema.namespace)} ALTER COLUMN ${ident(column.name)} SET DATA TYPE ${columnType(field.type)}`,
        )
      if (change === 'rewrite')
        rewrites.push(
          `${rewriteExpression(ident(column.name), column.type, field.type)} AS ${ident(column.name)}`,
        )
    }
    if (added.length > 0) {
      // A schema update that only appends fields: what ALLOW_FIELD_ADDITION permits.
      const [metadata] = await table.getMetadata()
      const fields = [...((metadata.schema?.fields ?? []) as TableField[]), ...added.map(tableField)]
      await table.setMetadata({ schema: { fields } })
    }
    for (const alter of alters) await this.client.query({ query: alter, location: this.config.location })
    if (rewrites.length > 0) {
      // BigQuery coerces no DATE to TIMESTAMP nor anything to STRING in place: the table is rewritten.
      const path = this.path(schema.namespace)
      await this.client.query({
        query: `CREATE OR REPLACE TABLE ${path} AS SELECT * REPLACE (${rewrites.join(', ')}) FROM ${path}`,
        location: this.config.location,
      })
    }
    this.tables.delete(schema.namespace.toLowerCase())
  }

  /** The staging schema of a part: its fields typed as the table's columns hold them. */
  private async stagingFields(schema: NamespaceSchema): Promise<TableField[]> {
    let columns = await this.columns(schema.namespace)
    if (!columns || schema.fields.some((f) => !columns?.has(f.name.toLowerCase()))) {
      await this.ensureTable(schema)
      columns = await this.columns(schema.namespace)
    }
    return schema.fields.map((field) => {
      const column = columns?.get(field.name.toLowerCase())
      return {
        name: column?.name ?? field.name,
        type: column?.type ?? columnType(field.type),
        mode: 'NULLABLE',
      }
    })
  }

  private async exists(table: string): Promise<boolean> {
    const [found] = await this.client.dataset(this.config.dataset).table(table).exists()
    return found
  }

  private async dropStaging(staged: readonly StagedPart[]): Promise<void> {
    for (const part of staged)
      await this.client
        .dataset(this.config.dataset)
        .table(part.staging)
        .delete()
        .catch(() => {})
  }

  private path(table: string): string {
    return tablePath(this.config.project, this.config.dataset, table)
  }

  private target(table: string): string {
    return `table ${this.config.project}.${this.config.dataset}.${table}`
  }
}

/** Both lists of refused rows of a part, each row once, in row order. */
function mergeRefusals(a: readonly RefusedRow[], b: readonly RefusedRow[]): RefusedRow[] {
  const byRow = new Map<number, RefusedRow>()
  for (const row of [...a, ...b]) if (!byRow.has(row.row)) byRow.set(row.row, row)
  return [...byRow.values()].sort((x, y) => x.row - y.row)
}

function tableField(field: Field): TableField {
  return { name: field.name, type: columnType(field.type), mode: 'NULLABLE' }
}

/** Creating what a concurrent writer just created is success. */
async function ignoreExisting(creation: Promise<unknown>): Promise<void> {
  try {
    await creation
  } catch (error) {
    if (httpStatus(error) !== 409) throw error
  }
}
