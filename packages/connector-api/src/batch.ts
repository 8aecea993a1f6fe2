/**
 * What travels from a source through the WAL to a sink. Rows move as encoded bytes, never as
 * JavaScript values, so a sink's bulk path (COPY, read_csv, a file write) consumes a batch without
 * per-value work:
 *
 * - `csv`: RFC 4180, no header row, one record per row, columns in the order of the namespace
 *   schema's fields. An unquoted empty field is NULL; an empty string is `""`.
 * - `jsonl`: one JSON object per line keyed by field name; a missing key is NULL.
 *
 * In both, `date` is `YYYY-MM-DD`, `timestamp` is ISO 8601 with an offset (`Z`), `json` is JSON
 * text (a CSV field / a nested JSON value).
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
  readonly parts: readonly (BatchPart & { readonly schema: NamespaceSchema })[]
}
