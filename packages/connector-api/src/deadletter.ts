/**
 * Deadletters: records that can never land as they are. A bad record never stops a pipeline; it is
 * set aside, whole and with its reason, and the rest of its batch lands once.
 *
 * - A source that reads a record it cannot pass on (bytes that are not UTF-8, a NUL, a value its
 *   configured schema refuses, a line that is not JSON) gives it in its chunk's `refused` instead
 *   of failing (source.ts). The runner commits it in the same WAL batch as the chunk's rows, as a
 *   part of namespace `deadletterNamespace(pipeline)`, so a crash keeps or loses both together.
 * - A sink whose destination refuses some rows of a batch writes nothing and answers `refused`,
 *   naming every such row (sink.ts). The runner sets them aside and writes the batch again
 *   without them, under the same identity.
 *
 * The runner lands a batch's deadletters in the pipeline's deadletter sink, as namespace
 * `deadletterNamespace(pipeline)` (`DEADLETTER_FIELDS`), under `deadletterIdentity(batch, stage)`:
 * the source's beside the batch's rows (both come from the WAL, so a retry has them again), the
 * rows the destination refused before the rest of the batch is written (a retry meets the same
 * refusal). An exactly-once deadletter sink recognises a retry of each, so a crash anywhere neither
 * loses a deadletter nor writes one twice. Without a deadletter sink the records are counted and
 * dropped, with a warning.
 */
import type { BatchIdentity } from './batch.js'
import type { Field, NamespaceSchema } from './schema.js'

/** A record a source cannot pass on: what it held, why, and where it was. */
export interface RefusedRecord {
  readonly namespace: string
  /** The record's text as the source held it; bytes that are not UTF-8, and NUL (no PostgreSQL text holds it), as U+FFFD. */
  readonly record: string
  /** One line: what is wrong, where, how to fix it. */
  readonly error: string
  /** A stable code (errors.ts), e.g. `SKIPPR_BAD_RECORD`. */
  readonly failureCode: string
  /** The file, table or URL the record came from. */
  readonly sourceUri?: string
  /** What `offsetPos` counts in, e.g. `line`. */
  readonly offsetKey?: string
  readonly offsetPos?: number
}

/** The vendor's deadletter columns, in order. */
export const DEADLETTER_FIELDS: readonly Field[] = [
  { name: 'id', type: 'string', nullable: false },
  { name: 'namespace', type: 'string', nullable: false },
  { name: 'record', type: 'string' },
  { name: 'error', type: 'string' },
  { name: 'failure_code', type: 'string' },
  { name: 'event_time', type: 'timestamp' },
  { name: 'processed_time', type: 'timestamp' },
  { name: 'source_uri', type: 'string' },
  { name: 'offset_key', type: 'string' },
  { name: 'offset_pos', type: 'long' },
]

/** The namespace a pipeline's deadletters land in: the table `_dl_<pipeline>`. */
export function deadletterNamespace(pipeline: string): string {
  return `_dl_${pipeline}`
}

export function deadletterSchema(pipeline: string): NamespaceSchema {
  return { namespace: deadletterNamespace(pipeline), fields: DEADLETTER_FIELDS }
}

/**
 * Which of a batch's deadletters a write holds: those its source set aside, the rows its destination
 * refused, or the whole batch moved aside by an operator (`DEADLETTER BATCH`).
 */
export type DeadletterStage = 'source' | 'refused' | 'moved'

/**
 * The identity of one stage of a batch's deadletters: the batch's own, under another pipeline name
 * per stage (`_dl_<pipeline>`, `_dl_<pipeline>.refused`, `_dl_<pipeline>.moved`; no pipeline name
 * holds a `.`), so that a deadletter sink sharing a database with the data sink keeps them apart in
 * its record of landed batches, and each stage lands once.
 */
export function deadletterIdentity(id: BatchIdentity, stage: DeadletterStage = 'source'): BatchIdentity {
  const pipeline = deadletterNamespace(id.pipeline)
  return { ...id, pipeline: stage === 'source' ? pipeline : `${pipeline}.${stage}` }
}
