/**
 * What a pipeline's WAL holds right now, summed from a read-only snapshot (no lock, no lease):
 * the committed batches not landed yet, their rows and bytes per namespace, and the source offset
 * the newest of them carries.
 */
import type { BatchIdentity, JsonValue } from '@skippr/connector-api'
import { openWalSnapshot } from '@skippr/wal'
import { walBackend } from '../runner/wal-backend.js'
import type { PipelineHandle } from './catalog.js'

export interface PendingTotals {
  readonly rows: number
  readonly bytes: number
}

/** One pending batch, as `SHOW PIPELINE` lists the oldest ones. */
export interface PendingBatch {
  readonly id: BatchIdentity
  readonly rows: number
  readonly namespaces: readonly string[]
}

/** The oldest pending batches listed; the rest are counted. */
export const LISTED_BATCHES = 20

export interface PendingSummary {
  readonly epoch: string | undefined
  readonly landedSeq: bigint
  readonly batches: number
  /** Offset of the newest pending batch: where the next sync resumes. */
  readonly lastOffset: JsonValue | undefined
  readonly namespaces: ReadonlyMap<string, PendingTotals>
  /** The oldest `LISTED_BATCHES` pending batches, oldest (the one landing waits on) first. */
  readonly oldest: readonly PendingBatch[]
}

export async function summarisePending(pipeline: PipelineHandle): Promise<PendingSummary> {
  const { settings } = pipeline
  const snapshot = await openWalSnapshot({
    pipeline: settings.name,
    dataDir: settings.dataDir,
    backend: walBackend(settings, pipeline.state),
  })
  const namespaces = new Map<string, PendingTotals>()
  let batches = 0
  let lastOffset: JsonValue | undefined
  const oldest: PendingBatch[] = []
  for await (const batch of snapshot.batches()) {
    batches++
    if (oldest.length < LISTED_BATCHES)
      oldest.push({
        id: batch.id,
        rows: batch.parts.reduce((sum, part) => sum + part.rows, 0),
        namespaces: [...new Set(batch.parts.map((part) => part.namespace))],
      })
    lastOffset = batch.offset as JsonValue | undefined
    for (const part of batch.parts) {
      const totals = namespaces.get(part.namespace) ?? { rows: 0, bytes: 0 }
      namespaces.set(part.namespace, {
        rows: totals.rows + part.rows,
        bytes: totals.bytes + part.body.length,
      })
    }
  }
  return { epoch: snapshot.epoch, landedSeq: snapshot.landedSeq, batches, lastOffset, namespaces, oldest }
}
