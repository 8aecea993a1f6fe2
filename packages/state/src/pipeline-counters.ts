/**
 * Cumulative rows and bytes per namespace that a pipeline committed to its WAL and landed in its
 * destination: what `SHOW STATS` reports beside the pending rows it reads from the WAL itself.
 *
 * The sync runner records a batch after `wal.commit()` resolves and again after
 * `wal.markLanded()`; `reset()` clears the record and `drop()` deletes it with the rest of the
 * pipeline's state.
 *
 * Each batch counts once: the record remembers the last (epoch, seq) added per kind and ignores a
 * batch at or before it, so a batch landed again after a restart is not counted twice. A process
 * killed between the WAL write and the record's write leaves that one batch uncounted: the
 * counters may lag, never run ahead.
 */
import type { StateBackend } from './backend.js'
import { WriteConflictError } from './errors.js'
import type { JsonValue } from './json.js'

/** A batch's identity as the WAL gives it (structurally the connector-api type). */
export interface CountedBatch {
  readonly epoch: string
  readonly seq: bigint
}

export interface NamespaceCounts {
  readonly committedRows: number
  readonly committedBytes: number
  readonly landedRows: number
  readonly landedBytes: number
  /** Rows set aside as deadletters (landed in a deadletter sink, or dropped without one). */
  readonly deadletterRows: number
}

/** What a batch part contributes: its rows and body size. */
export interface CountedPart {
  readonly namespace: string
  readonly rows: number
  /** One buffer, or the chunks it was committed from. */
  readonly body: Uint8Array | readonly Uint8Array[]
  /** Landed only: rows of this namespace set aside as deadletters. */
  readonly deadletters?: number
}

type Kind = 'committed' | 'landed'

/** What a part adds to the counters: its sizes, without its body. */
export interface PartCount {
  readonly namespace: string
  readonly rows: number
  readonly bytes: number
  readonly deadletters?: number
}

/** One batch to count: committed to the WAL, or landed. */
export interface CountedEntry {
  readonly kind: Kind
  readonly id: CountedBatch
  readonly parts: readonly PartCount[]
}

interface Mark {
  readonly epoch: string
  readonly seq: string
}

interface CountersRecord {
  readonly committed?: Mark
  readonly landed?: Mark
  readonly namespaces: Record<string, NamespaceCounts>
}

const ZERO: NamespaceCounts = {
  committedRows: 0,
  committedBytes: 0,
  landedRows: 0,
  landedBytes: 0,
  deadletterRows: 0,
}
const MAX_ATTEMPTS = 100

export class PipelineCounters {
  constructor(
    private readonly backend: StateBackend,
    private readonly key: string,
  ) {}

  /** Counts a batch that `wal.commit()` made durable. */
  recordCommitted(id: CountedBatch, parts: readonly CountedPart[]): Promise<void> {
    return this.recordAll([{ kind: 'committed', id, parts: partCounts(parts) }])
  }

  /** Counts a batch that `wal.markLanded()` recorded as landed. */
  recordLanded(id: CountedBatch, parts: readonly CountedPart[]): Promise<void> {
    return this.recordAll([{ kind: 'landed', id, parts: partCounts(parts) }])
  }

  /** Counts per namespace; a namespace never counted is absent. */
  async read(): Promise<ReadonlyMap<string, NamespaceCounts>> {
    const record = (await this.backend.get(this.key))?.value as CountersRecord | undefined
    return new Map(
      Object.entries(record?.namespaces ?? {}).map(([ns, counts]) => [ns, { ...ZERO, ...counts }]),
    )
  }

  /** RESET PIPELINE: counting starts again. */
  async clear(): Promise<void> {
    await this.backend.delete(this.key)
  }

  /**
   * Counts several batches in one write, in the order given; each batch at or before its kind's
   * mark is left out, as when counted alone.
   */
  async recordAll(entries: readonly CountedEntry[]): Promise<void> {
    if (entries.length === 0) return
    const backend = this.backend
    let current = await backend.get(this.key)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let record = (current?.value as CountersRecord | undefined) ?? { namespaces: {} }
      let changed = false
      for (const { kind, id, parts } of entries) {
        const mark = record[kind]
        if (mark !== undefined && mark.epoch === id.epoch && BigInt(mark.seq) >= id.seq) continue
        record = {
          ...record,
          [kind]: { epoch: id.epoch, seq: id.seq.toString() },
          namespaces: added(record.namespaces, kind, parts),
        }
        changed = true
      }
      if (!changed) return
      const condition = current ? { expectedVersion: current.version } : { mustNotExist: true as const }
      const put = await backend.put(this.key, record as unknown as JsonValue, condition)
      if (put.ok) return
      current = put.current
    }
    throw new WriteConflictError(this.key, MAX_ATTEMPTS)
  }
}

function added(
  namespaces: Record<string, NamespaceCounts>,
  kind: Kind,
  parts: readonly PartCount[],
): Record<string, NamespaceCounts> {
  const out = { ...namespaces }
  for (const part of parts) {
    // Records written before a field existed lack it.
    const counts = { ...ZERO, ...out[part.namespace] }
    out[part.namespace] =
      kind === 'committed'
        ? {
            ...counts,
            committedRows: counts.committedRows + part.rows,
            committedBytes: counts.committedBytes + part.bytes,
          }
        : {
            ...counts,
            landedRows: counts.landedRows + part.rows,
            landedBytes: counts.landedBytes + part.bytes,
            deadletterRows: counts.deadletterRows + (part.deadletters ?? 0),
          }
  }
  return out
}

/** The parts' sizes: a count kept for later must not keep the batch's bodies alive. */
export function partCounts(parts: readonly CountedPart[]): PartCount[] {
  return parts.map((part) => ({
    namespace: part.namespace,
    rows: part.rows,
    bytes: byteLength(part.body),
    ...(part.deadletters !== undefined && { deadletters: part.deadletters }),
  }))
}

function byteLength(body: Uint8Array | readonly Uint8Array[]): number {
  if (body instanceof Uint8Array) return body.length
  let bytes = 0
  for (const chunk of body) bytes += chunk.length
  return bytes
}
