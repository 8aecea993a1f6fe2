/**
 * `_skippr_batches` (one row per landed batch: pipeline, epoch, seq, the fence token it landed
 * with, the attempt that landed it, landed_at) and `_skippr_fences` (each pipeline's highest fence
 * token). A batch's transaction first raises its pipeline's fence row with an UPDATE, which holds
 * the row until COMMIT (Snowflake's INSERTs do not block each other; its UPDATEs do), so a deposed
 * writer's batch cannot commit after a newer writer's; after its copies it records the identity,
 * by an INSERT that inserts nothing when the identity is there or the fence row holds a higher
 * token, and commits only if the row went in. Only a batch that did not land reads the ledger
 * (`status`), to say why: a landed batch spends no statement on reading it.
 */
import type { BatchIdentity } from '@skippr/connector-api'
import type { Session } from './client.js'

export interface LedgerStatus {
  /** The pipeline's highest fence token, this batch's included; undefined when its row is gone. */
  readonly highest: bigint | undefined
  /** The attempt that landed this batch; undefined when it has not landed. */
  readonly attempt: string | undefined
}

const SEQ = 'CAST(? AS NUMBER(20,0))'

export class Ledger {
  /** `batches` and `fences` are the qualified, quoted table names. */
  constructor(
    private readonly batches: string,
    private readonly fences: string,
  ) {}

  async create(session: Session): Promise<void> {
    await session.run(
      `CREATE TABLE IF NOT EXISTS ${this.batches} (pipeline VARCHAR NOT NULL, epoch VARCHAR NOT NULL, ` +
        'seq NUMBER(20,0) NOT NULL, fence NUMBER(20,0) NOT NULL, attempt VARCHAR NOT NULL, ' +
        'landed_at TIMESTAMP_TZ NOT NULL, PRIMARY KEY (pipeline, epoch, seq))',
    )
    await session.run(
      `CREATE TABLE IF NOT EXISTS ${this.fences} (pipeline VARCHAR NOT NULL, token NUMBER(20,0) NOT NULL, PRIMARY KEY (pipeline))`,
    )
  }

  /** The pipeline's fence row, outside the batch's transaction (an UPDATE needs a row to hold). */
  async ensureFenceRow(session: Session, pipeline: string): Promise<void> {
    await session.run(
      `INSERT INTO ${this.fences} (pipeline, token) SELECT ?, 0 WHERE NOT EXISTS (SELECT 1 FROM ${this.fences} WHERE pipeline = ?)`,
      [pipeline, pipeline],
    )
  }

  /** In the batch's transaction: raises and holds the fence row; false when the row is gone. */
  async hold(session: Session, pipeline: string, fence: bigint): Promise<boolean> {
    const rows = await session.run(
      `UPDATE ${this.fences} SET token = GREATEST(token, ${SEQ}) WHERE pipeline = ?`,
      [fence.toString(), pipeline],
    )
    return changedRows(rows) > 0
  }

  /** The pipeline's highest fence and the attempt that landed this batch, as the ledger holds them. */
  async status(session: Session, id: BatchIdentity): Promise<LedgerStatus> {
    const rows = await session.run(
      `SELECT CAST(MAX(token) AS VARCHAR) AS "highest", (SELECT MAX(attempt) FROM ${this.batches} ` +
        `WHERE pipeline = ? AND epoch = ? AND seq = ${SEQ}) AS "attempt" FROM ${this.fences} WHERE pipeline = ?`,
      [id.pipeline, id.epoch, id.seq.toString(), id.pipeline],
    )
    const row = rows[0] ?? {}
    return {
      highest: row.highest === null || row.highest === undefined ? undefined : BigInt(String(row.highest)),
      attempt: row.attempt === null || row.attempt === undefined ? undefined : String(row.attempt),
    }
  }

  /**
   * In the batch's transaction, after `hold`: records the identity unless it is recorded already or
   * the fence row holds a higher token than `fence`; whether it did.
   */
  async record(session: Session, id: BatchIdentity, fence: bigint, attempt: string): Promise<boolean> {
    const rows = await session.run(
      `INSERT INTO ${this.batches} (pipeline, epoch, seq, fence, attempt, landed_at) ` +
        `SELECT ?, ?, ${SEQ}, ${SEQ}, ?, CURRENT_TIMESTAMP() WHERE NOT EXISTS (SELECT 1 FROM ${this.batches} ` +
        `WHERE pipeline = ? AND epoch = ? AND seq = ${SEQ}) AND (SELECT MAX(token) FROM ${this.fences} ` +
        `WHERE pipeline = ?) = ${SEQ}`,
      [
        id.pipeline,
        id.epoch,
        id.seq.toString(),
        fence.toString(),
        attempt,
        id.pipeline,
        id.epoch,
        id.seq.toString(),
        id.pipeline,
        fence.toString(),
      ],
    )
    return changedRows(rows) > 0
  }
}

/** The rows a DML statement changed: its result's first value ("number of rows inserted", …). */
function changedRows(rows: readonly Record<string, unknown>[]): number {
  return Number(Object.values(rows[0] ?? {})[0] ?? 0)
}
