import type { SinkBatch } from './batch.js'
import type { ConnectorContext, ConnectorDefinition } from './connector.js'
import type { NamespaceSchema } from './schema.js'

/**
 * How a retry of a batch is made harmless (this package's README, "Guarantee tiers"):
 * - `exactly-once`: the batch identity is stored in the destination in the same transaction as
 *   the rows; a retry of a landed batch is recognised and skipped.
 * - `overwrite-on-retry`: a deterministic path per batch, rewritten whole.
 * - `at-least-once`: a retry may duplicate rows.
 * - `none`: not retried.
 */
export const GUARANTEES = ['exactly-once', 'overwrite-on-retry', 'at-least-once', 'none'] as const
export type Guarantee = (typeof GUARANTEES)[number]

/**
 * A write's result as data, so the runner owns retries and backoff:
 * - `landed`: the destination has the rows now.
 * - `already-landed`: the identity was found; nothing was written.
 * - `retry`: a transient failure (network, lock, timeout); the batch may land later.
 * - `refused`: the destination refuses these rows of the batch for their data (a value it cannot
 *   hold, a constraint); nothing was written. `rows` names every refused row of the batch, so that
 *   the runner sets them aside (deadletter.ts) and writes the rest again under the same identity.
 * - `fatal`: this batch can never land as it is (fenced writer, bad permissions, a schema conflict).
 * A sink that throws instead is treated as `retry`.
 */
export type WriteOutcome =
  | { readonly status: 'landed'; readonly rows: number }
  | { readonly status: 'already-landed' }
  | { readonly status: 'retry'; readonly error: Error }
  | { readonly status: 'refused'; readonly rows: readonly RefusedRow[] }
  | { readonly status: 'fatal'; readonly error: Error }

/** A row a destination refuses: its part (index in `SinkBatch.parts`) and record (`recordRanges`). */
export interface RefusedRow {
  readonly part: number
  readonly row: number
  /** The destination's reason, as one line naming the column and value where it can. */
  readonly error: string
  /** The destination's code for it (a SQLSTATE, a DuckDB error type), or a SKIPPR_ code. */
  readonly code: string
}

export interface Sink {
  readonly guarantee: Guarantee
  /**
   * How many batches the runner may write at once (default 1: one after another, in commit order).
   * Above 1, writes overlap and may commit in any order, so each must stand alone: its identity
   * check, fence check and rows in its own transaction, none waiting on another's locks. The runner
   * still marks batches landed in commit order.
   */
  readonly concurrentWrites?: number
  /**
   * Creates the namespace's table if missing, adds new columns, widens types. Idempotent. A failure
   * is retried like a write's, unless the error is marked `permanent` (errors.ts): then the
   * pipeline stops with it.
   */
  prepare(schema: NamespaceSchema): Promise<void>
  /** Writes every part of the batch, or none of them. */
  write(batch: SinkBatch): Promise<WriteOutcome>
  /**
   * Connects with the configured credentials (or opens the destination read-only) and throws the
   * error a write would meet if it cannot, then lets go. Creates nothing, writes nothing:
   * `skipprd doctor` calls it.
   */
  check?(): Promise<void>
  /** The rows landed in `namespace`'s table now; 0 when the table does not exist yet. */
  count?(namespace: string): Promise<number>
  /**
   * The rows of `namespace` that repeat another: beyond the first of each group of rows with the
   * same values in `key` (the namespace's primary key as saved, never empty). 0 when the table
   * does not exist yet. The batch identities an exactly-once sink records cannot repeat (they are
   * its ledger's primary key), so the rows' own key is what tells a batch landed twice.
   */
  duplicates?(namespace: string, key: readonly string[]): Promise<number>
  close(): Promise<void>
}

/**
 * The destination's own bulk load of a CSV file, without skipprd: what `skipprd benchmark` puts
 * skipprd's rate beside (a DuckDB `read_csv`, a PostgreSQL `COPY`). It works on tables of the sink's
 * configured place (its schema, its file), named by the caller, and on nothing else.
 */
export interface BulkLoad {
  /**
   * Creates `table` with the columns of `schema`, typed as `prepare` types them, and loads every
   * record of `csvFile` (RFC 4180, a header row first, the columns in the schema's order) into it
   * in the destination's fastest way; resolves with the rows the destination reports it loaded.
   */
  load(table: string, schema: NamespaceSchema, csvFile: string): Promise<number>
  /** Drops `table` if it exists. */
  drop(table: string): Promise<void>
  /**
   * Removes what the sink's own bookkeeping holds of `pipeline` (its landed batch identities, its
   * fence token), so a pipeline run only to measure leaves nothing behind.
   */
  forgetPipeline(pipeline: string): Promise<void>
  close(): Promise<void>
}

export interface SinkDefinition<Config = unknown> extends ConnectorDefinition<Config> {
  readonly kind: 'sink'
  readonly guarantee: Guarantee
  create(config: Config, context: ConnectorContext): Sink | Promise<Sink>
  /**
   * True when `prepare` renames the column of a field a user renamed (`Field.formerNames`).
   * Otherwise the table keeps the old column, with the rows landed before, and gains the new one.
   */
  readonly renamesColumns?: boolean
  /**
   * Optional: the destination's own bulk load, for `skipprd benchmark`. A sink without one is
   * benchmarked alone, with nothing to compare its rate with.
   */
  bulkLoad?(config: Config, context: ConnectorContext): BulkLoad | Promise<BulkLoad>
}

export function landed(rows: number): WriteOutcome {
  return { status: 'landed', rows }
}

export function alreadyLanded(): WriteOutcome {
  return { status: 'already-landed' }
}

export function retryLater(error: unknown): WriteOutcome {
  return { status: 'retry', error: asError(error) }
}

export function refused(rows: readonly RefusedRow[]): WriteOutcome {
  return { status: 'refused', rows }
}

export function cannotLand(error: unknown): WriteOutcome {
  return { status: 'fatal', error: asError(error) }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}
