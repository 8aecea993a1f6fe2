/**
 * Cumulative rows and bytes per namespace that a pipeline committed to its WAL and landed in its
 * destination: what `SHOW STATS` reports beside the pending rows it reads from the WAL itself.
 *
 * The sync runner records a batch after `wal.commit()` resolves and again after
 * `wal.markLanded()`; RESET PIPELINE clears the record and DROP PIPELINE deletes it with the rest of
 * the pipeline's state. The record lives in the state store under the pipeline's own key prefix
 * (`<workspace>/pipelines/<pipeline>/counters`, see @skippr/state's key layout), so it follows the
 * pipeline wherever its state lives.
 *
 * Each batch counts once: the record remembers the last (epoch, seq) added per kind and ignores a
 * batch at or before it, so a batch landed again after a restart is not counted twice. A process
 * killed between the WAL write and the record's write leaves that one batch uncounted: the
 * counters may lag, never run ahead.
 */
import type { BatchIdentity } from '@skippr/connector-api'
import { type JsonValue, type StateStore, WriteConflictError } from '@skippr/state'

export interface NamespaceCounts {
  readonly committedRows: number
  readonly committedBytes: number
  readonly landedRows: number
  readonly landedBytes: number
}

/** What a batch part contributes: its rows and body size. */
export interface CountedPart {
  readonly namespace: string
  readonly rows: number
  readonly body: Uint8Array
}

type Kind = 'committed' | 'landed'

interface Mark {
  readonly epoch: string
  readonly seq: string
}

interface CountersRecord {
  readonly committed?: Mark
  readonly landed?: Mark
  readonly namespaces: Record<string, NamespaceCounts>
}

const ZERO: NamespaceCounts = { committedRows: 0, committedBytes: 0, landedRows: 0, landedBytes: 0 }
const MAX_ATTEMPTS = 100

export class PipelineCounters {
  private readonly key: string

  constructor(
    private readonly store: StateStore,
    pipeline: string,
  ) {
    this.key = `${encodeURIComponent(store.workspace)}/pipelines/${encodeURIComponent(pipeline)}/counters`
  }

  /** Counts a batch that `wal.commit()` made durable. */
  recordCommitted(id: BatchIdentity, parts: readonly CountedPart[]): Promise<void> {
    return this.record('committed', id, parts)
  }

  /** Counts a batch that `wal.markLanded()` recorded as landed. */
  recordLanded(id: BatchIdentity, parts: readonly CountedPart[]): Promise<void> {
    return this.record('landed', id, parts)
  }

  /** Counts per namespace; a namespace never counted is absent. */
  async read(): Promise<ReadonlyMap<string, NamespaceCounts>> {
    const record = (await this.store.backend.get(this.key))?.value as CountersRecord | undefined
    return new Map(Object.entries(record?.namespaces ?? {}))
  }

  /** RESET PIPELINE: counting starts again. */
  async clear(): Promise<void> {
    await this.store.backend.delete(this.key)
  }

  private async record(kind: Kind, id: BatchIdentity, parts: readonly CountedPart[]): Promise<void> {
    const backend = this.store.backend
    let current = await backend.get(this.key)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const record = (current?.value as CountersRecord | undefined) ?? { namespaces: {} }
      const mark = record[kind]
      if (mark !== undefined && mark.epoch === id.epoch && BigInt(mark.seq) >= id.seq) return
      const next: CountersRecord = {
        ...record,
        [kind]: { epoch: id.epoch, seq: id.seq.toString() },
        namespaces: added(record.namespaces, kind, parts),
      }
      const condition = current ? { expectedVersion: current.version } : { mustNotExist: true as const }
      const put = await backend.put(this.key, next as unknown as JsonValue, condition)
      if (put.ok) return
      current = put.current
    }
    throw new WriteConflictError(this.key, MAX_ATTEMPTS)
  }
}

function added(
  namespaces: Record<string, NamespaceCounts>,
  kind: Kind,
  parts: readonly CountedPart[],
): Record<string, NamespaceCounts> {
  const out = { ...namespaces }
  for (const part of parts) {
    const counts = out[part.namespace] ?? ZERO
    out[part.namespace] =
      kind === 'committed'
        ? {
            ...counts,
            committedRows: counts.committedRows + part.rows,
            committedBytes: counts.committedBytes + part.body.length,
          }
        : {
            ...counts,
            landedRows: counts.landedRows + part.rows,
            landedBytes: counts.landedBytes + part.body.length,
          }
  }
  return out
}
