/**
 * What travels from a source through the WAL to a sink. Rows move as encoded bytes, never as
 * JavaScript values, so a sink's bulk path (COPY, read_csv, a file write) consumes a batch without
 * per-value work:
 *
 * - `csv`: RFC 4180, no header row, one record per row, columns in the order of the namespace
 *   schema's fields. An unquoted empty field is NULL; an empty string is `""`. Every record ends in
 *   LF alone, and a quote appears only as a field's quoting (doubled inside it): a CR, or a quote
 *   that is part of a value, is inside a quoted field, so that every sink's CSV reader takes the
 *   same values from the bytes.
 * - `jsonl`: one JSON object per line keyed by field name; a missing key is NULL.
 *
 * In both, `date` is `YYYY-MM-DD`, `timestamp` is ISO 8601 with an offset (`Z`), `json` is JSON
 * text (a CSV field / a nested JSON value). Outside the years 1 to 9999 dates and timestamps take
 * forms that PostgreSQL and DuckDB both read as they are:
 *
 * - a year past 9999 has as many digits as it needs: `12345-06-07`, `12345-06-07T08:09:10Z`;
 * - a year before 1 AD is its BC year (1 BC is `0001`, there is no year 0) with ` (BC)` after the
 *   date, and a space before the time: `0044-03-15 (BC)`, `0044-03-15 (BC) 10:00:00.000000Z`.
 *   (A signed ISO year such as `-0043` is not PostgreSQL input; a bare ` BC` DuckDB reads as AD.)
 * - `infinity` and `-infinity` are the dates and timestamps after and before all others.
 *
 * A sink whose column cannot hold a value (DuckDB's timestamps end in 294247 AD) refuses the batch,
 * naming the column and the value; it never lands NULL or another date.
 */
import type { NamespaceSchema } from './schema.js'

export const RECORD_FORMATS = ['csv', 'jsonl'] as const
export type RecordFormat = (typeof RECORD_FORMATS)[number]

/** JSON-serialisable data: what offsets and saved state are made of. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [k: string]: JsonValue }

/**
 * A source position. Opaque to the runner: the source that produced it is the only reader.
 * Resuming from it must not re-read anything before it.
 */
export type SourceOffset = JsonValue

/**
 * A batch's identity, stable across retries and restarts and unique across resets: the WAL
 * epoch is recreated when a pipeline is reset, and `seq` never repeats within an epoch.
 */
export interface BatchIdentity {
  readonly pipeline: string
  readonly epoch: string
  readonly seq: bigint
}

/** One string form of an identity, for marker tables, file names and logs. */
export function batchKey(id: BatchIdentity): string {
  return `${id.pipeline}/${id.epoch}/${id.seq.toString().padStart(12, '0')}`
}

/**
 * The column (or message header) in which an at-least-once sink tags every row with its `partKey`,
 * so that the copies a retry lands can be told apart from genuinely equal rows and removed.
 */
export const BATCH_COLUMN = '_skippr_batch'

/** One part of a batch, as `batchKey` + `/<index in SinkBatch.parts>`: the same on every retry. */
export function partKey(id: BatchIdentity, part: number): string {
  return `${batchKey(id)}/${part}`
}

/** The rows of one namespace inside a batch. */
export interface BatchPart {
  readonly namespace: string
  readonly schemaVersion: number
  readonly format: RecordFormat
  readonly rows: number
  readonly body: Uint8Array
}

/** What a sink is asked to write: every part lands, or none does. */
export interface SinkBatch {
  readonly id: BatchIdentity
  /**
   * The writer lease's fencing token. Exactly-once sinks remember the highest token they saw per
   * pipeline and refuse a lower one, so a writer that lost its lease cannot land stale data.
   */
  readonly fence: bigint
  /**
   * When the batch was committed, in ms since 1970 (UTC): from the WAL, never the write's clock, so
   * every retry, on any host and however much later, sees the same time (object sinks' Hive-style
   * `dt=` paths). Absent for a batch an older WAL format holds.
   */
  readonly committedAt?: number
  readonly parts: readonly (BatchPart & { readonly schema: NamespaceSchema })[]
}
