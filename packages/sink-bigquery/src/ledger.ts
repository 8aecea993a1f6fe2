/**
 * `_skippr_batches`: one row per landed batch (pipeline, epoch, seq, the fence token it landed with,
 * the attempt that landed it, landed_at). The batch's transaction copies the staged rows and inserts
 * its row only when neither the identity nor a higher fence is there, so rows and identity commit
 * together or not at all.
 */
import type { BigQuery, TableField } from '@google-cloud/bigquery'
import { BATCHES_TABLE, type BatchIdentity } from '@skippr/connector-api'
import { ident, tablePath } from './names.js'

export const LEDGER_FIELDS: TableField[] = [
  { name: 'pipeline', type: 'STRING', mode: 'REQUIRED' },
  { name: 'epoch', type: 'STRING', mode: 'REQUIRED' },
  { name: 'seq', type: 'INT64', mode: 'REQUIRED' },
  { name: 'fence', type: 'INT64', mode: 'REQUIRED' },
  { name: 'attempt', type: 'STRING', mode: 'REQUIRED' },
  { name: 'landed_at', type: 'TIMESTAMP', mode: 'REQUIRED' },
]

export interface LedgerStatus {
  /** The highest fence token a batch of the pipeline landed with; undefined before the first. */
  readonly highest: bigint | undefined
  /** Whether this batch landed, and by which attempt. */
  readonly attempt: string | undefined
}

/** A staged part for the transaction: rows of `staging` copied into `table`'s `columns`. */
export interface StagedPart {
  readonly table: string
  readonly staging: string
  readonly columns: readonly string[]
}

const WHERE_BATCH = 'pipeline = @pipeline AND epoch = @epoch AND seq = CAST(@seq AS INT64)'

function params(id: BatchIdentity, extra: Record<string, string> = {}): Record<string, string> {
  return { pipeline: id.pipeline, epoch: id.epoch, seq: id.seq.toString(), ...extra }
}

function statusSelect(ledger: string): string {
  return (
    `SELECT CAST((SELECT MAX(fence) FROM ${ledger} WHERE pipeline = @pipeline) AS STRING) AS highest, ` +
    `(SELECT MAX(attempt) FROM ${ledger} WHERE ${WHERE_BATCH}) AS attempt`
  )
}

function statusOf(rows: Record<string, unknown>[]): LedgerStatus {
  const row = rows[0] ?? {}
  const highest = row.highest === null || row.highest === undefined ? undefined : BigInt(String(row.highest))
  const attempt = row.attempt === null || row.attempt === undefined ? undefined : String(row.attempt)
  return { highest, attempt }
}

export class Ledger {
  private readonly path: string

  constructor(
    private readonly client: BigQuery,
    private readonly project: string,
    private readonly dataset: string,
    private readonly location: string,
  ) {
    this.path = tablePath(project, dataset, BATCHES_TABLE)
  }

  /**
   * The batch's one transaction: unless the identity or a higher fence is recorded, copies every
   * staged part and records the identity; then drops the staging tables (DDL, after the COMMIT: a
   * transaction holds none) and answers the ledger's state, all in one request.
   */
  async commit(
    id: BatchIdentity,
    fence: bigint,
    attempt: string,
    parts: readonly StagedPart[],
  ): Promise<LedgerStatus> {
    // Both statements test the ledger as the transaction found it (the copies leave it alone): a
    // request sent again (the SDK's own retry) finds the identity and copies nothing.
    const unclaimed =
      `NOT EXISTS (SELECT 1 FROM ${this.path} WHERE pipeline = @pipeline ` +
      'AND (fence > CAST(@fence AS INT64) OR (epoch = @epoch AND seq = CAST(@seq AS INT64))))'
    const copies = parts.map((part) => {
      const columns = part.columns.map(ident).join(', ')
      const target = tablePath(this.project, this.dataset, part.table)
      const staging = tablePath(this.project, this.dataset, part.staging)
      return `INSERT INTO ${target} (${columns}) SELECT ${columns} FROM ${staging} WHERE ${unclaimed};`
    })
    const drops = parts.map(
      (part) => `DROP TABLE IF EXISTS ${tablePath(this.project, this.dataset, part.staging)};`,
    )
    const script = [
      'BEGIN TRANSACTION;',
      ...copies,
      `INSERT INTO ${this.path} (pipeline, epoch, seq, fence, attempt, landed_at) ` +
        'SELECT @pipeline, @epoch, CAST(@seq AS INT64), CAST(@fence AS INT64), @attempt, CURRENT_TIMESTAMP() ' +
        `FROM (SELECT 1 AS one) WHERE ${unclaimed};`,
      'COMMIT TRANSACTION;',
      ...drops,
      `${statusSelect(this.path)};`,
    ].join('\n')
    const [rows] = await this.client.query({
      query: script,
      params: params(id, { fence: fence.toString(), attempt }),
      location: this.location,
    })
    return statusOf(rows as Record<string, unknown>[])
  }
}
