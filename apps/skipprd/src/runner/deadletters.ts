/**
 * The runner's side of deadletters (connector-api's deadletter.ts).
 *
 * In the WAL, the records a source set aside travel in their chunk's batch as a part of namespace
 * `_dl_<pipeline>`: one JSON object per line holding the deadletter columns but `id` and
 * `processed_time`, which are given when the batch lands. Rows the destination refuses are never
 * in the WAL as deadletters: a retry of the batch meets the same refusal and sets them aside again.
 *
 * Each stage of a batch's deadletters (connector-api's `DeadletterStage`) is numbered in a fixed
 * order — the source's in the WAL's order, the destination's and a moved batch's by part and row —
 * so their `id` (`<batch key>/<stage>/<n>`) is the same on every retry.
 */
import {
  type BatchIdentity,
  type BatchPart,
  batchKey,
  type DeadletterStage,
  deadletterIdentity,
  deadletterSchema,
  type NamespaceSchema,
  type RefusedRecord,
  type RefusedRow,
  recordRanges,
  type SinkBatch,
  timestampText,
  withoutRecords,
} from '@skippr/connector-api'
import type { CountedPart } from '@skippr/state'
import type { BufferChunk } from '@skippr/wal'

/** One deadletter before it lands: the columns but `id` and `processed_time`. */
export interface Deadletter {
  readonly namespace: string
  readonly record: string | null
  readonly error: string
  readonly failure_code: string
  readonly event_time: string | null
  readonly source_uri: string | null
  readonly offset_key: string | null
  readonly offset_pos: number | null
}

type Part = BatchPart & { readonly schema: NamespaceSchema }

/** The WAL part that carries a chunk's refused records, committed with the chunk's rows. */
export function deadletterChunk(
  pipeline: string,
  refused: readonly RefusedRecord[],
  offset: BufferChunk['offset'],
  readAt: Date,
): BufferChunk {
  const eventTime = isoTime(readAt)
  const lines = refused.map((r) =>
    JSON.stringify({
      namespace: r.namespace,
      record: r.record,
      error: r.error,
      failure_code: r.failureCode,
      event_time: eventTime,
      source_uri: r.sourceUri ?? null,
      offset_key: r.offsetKey ?? null,
      offset_pos: r.offsetPos ?? null,
    } satisfies Deadletter),
  )
  return {
    namespace: deadletterSchema(pipeline).namespace,
    format: 'jsonl',
    schemaVersion: 0,
    rows: refused.length,
    body: Buffer.from(lines.map((line) => `${line}\n`).join('')),
    offset,
  }
}

/** The deadletters a WAL part of namespace `_dl_<pipeline>` carries. */
export function walDeadletters(part: BatchPart): Deadletter[] {
  return Buffer.from(part.body.buffer, part.body.byteOffset, part.body.length)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Deadletter)
}

/**
 * The parts without the rows the destination refused, and those rows as deadletters. Their record
 * is the row as the batch encodes it (a CSV record, a JSON line); where it was is the batch and the
 * row's place in its part, since a part's rows may come from several places of the source.
 */
export function setAsideRefused(
  id: BatchIdentity,
  parts: readonly Part[],
  rows: readonly RefusedRow[],
): { readonly parts: Part[]; readonly deadletters: Deadletter[] } {
  const deadletters: Deadletter[] = []
  const kept = parts.map((part, index) => {
    const refused = rows.filter((r) => r.part === index).sort((a, b) => a.row - b.row)
    if (refused.length === 0) return part
    const { body, removed } = withoutRecords(part.body, part.format, new Set(refused.map((r) => r.row)))
    for (const [k, row] of refused.entries()) {
      deadletters.push({
        namespace: part.namespace,
        record: Buffer.from(removed[k]!).toString('utf8'),
        error: row.error,
        failure_code: row.code,
        event_time: null,
        source_uri: null,
        offset_key: `batch ${batchKey(id)} row`,
        offset_pos: row.row,
      })
    }
    return { ...part, body, rows: part.rows - refused.length }
  })
  return { parts: kept, deadletters }
}

/**
 * Every row of a WAL batch's data parts as a deadletter: what `DEADLETTER BATCH` moves aside when
 * no part of the batch can land (the records its source set aside are deadletters already). `why`
 * is their error.
 */
export function wholeBatchDeadletters(
  batch: { readonly id: BatchIdentity; readonly parts: readonly BatchPart[] },
  why: string,
  code: string,
): Deadletter[] {
  const deadletterPart = deadletterSchema(batch.id.pipeline).namespace
  return batch.parts
    .filter((part) => part.namespace !== deadletterPart)
    .flatMap((part) =>
      recordRanges(part.body, part.format).map(
        ([start, end], row): Deadletter => ({
          namespace: part.namespace,
          record: Buffer.from(part.body.subarray(start, end)).toString('utf8'),
          error: why,
          failure_code: code,
          event_time: null,
          source_uri: null,
          offset_key: `batch ${batchKey(batch.id)} row`,
          offset_pos: row,
        }),
      ),
    )
}

/** The deadletters the source set aside in a WAL batch (its part of namespace `_dl_<pipeline>`). */
export function sourceDeadletters(batch: {
  readonly id: BatchIdentity
  readonly parts: readonly BatchPart[]
}): Deadletter[] {
  const deadletterPart = deadletterSchema(batch.id.pipeline).namespace
  return batch.parts.filter((part) => part.namespace === deadletterPart).flatMap(walDeadletters)
}

/** The batch that lands one `stage` of a batch's deadletters, under that stage's deadletter identity. */
export function deadletterBatch(
  batch: { readonly id: BatchIdentity; readonly fence: bigint },
  stage: DeadletterStage,
  deadletters: readonly Deadletter[],
  processedAt: Date,
): SinkBatch {
  const key = batchKey(batch.id)
  const processedTime = isoTime(processedAt)
  const lines = deadletters.map((d, n) =>
    JSON.stringify({ id: `${key}/${stage}/${n}`, ...d, processed_time: processedTime }),
  )
  const schema = deadletterSchema(batch.id.pipeline)
  const body = Buffer.from(lines.map((line) => `${line}\n`).join(''))
  return {
    id: deadletterIdentity(batch.id, stage),
    fence: batch.fence,
    parts: [
      { namespace: schema.namespace, schemaVersion: 0, format: 'jsonl', rows: lines.length, body, schema },
    ],
  }
}

/** What a landed batch adds to the counters: the rows that landed, and those set aside per namespace. */
export function countedParts(
  parts: readonly { readonly namespace: string; readonly rows: number; readonly body: Uint8Array }[],
  deadletters: readonly Deadletter[],
): CountedPart[] {
  const counted: CountedPart[] = parts.map(({ namespace, rows, body }) => ({ namespace, rows, body }))
  const setAside = new Map<string, number>()
  for (const d of deadletters) setAside.set(d.namespace, (setAside.get(d.namespace) ?? 0) + 1)
  for (const [namespace, rows] of setAside)
    counted.push({ namespace, rows: 0, body: EMPTY, deadletters: rows })
  return counted
}

const EMPTY = new Uint8Array(0)

/** The contract's timestamp text (batch.ts) of a moment, to the microsecond. */
function isoTime(at: Date): string {
  return timestampText(BigInt(at.getTime()) * 1000n)
}
