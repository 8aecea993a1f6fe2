/**
 * The escape hatch for a batch no retry can land: `DEADLETTER BATCH <seq> IN PIPELINE p` moves it
 * whole to the pipeline's deadletter sink, `DISCARD BATCH <seq> IN PIPELINE p` drops it (counted in
 * the log); either marks it landed, so the pipeline lands on from the next batch and the source is
 * never read again (RESET would read it all again, and land twice what already landed).
 *
 * Only the oldest pending batch can go: the WAL lands in commit order, and it is the one landing
 * waits on (`SHOW PIPELINE` lists it first, with its attempts and last error). The statement holds
 * the writer lease while it runs, so no sync lands meanwhile. Its deadletters land under the
 * batch's deadletter identity, so running it again after a crash does not write them twice.
 */
import { batchKey, type DeadletterStage, type Sink, type WriteOutcome } from '@skippr/connector-api'
import type { Lease } from '@skippr/state'
import { openWal, type WalBatch } from '@skippr/wal'
import {
  countedParts,
  type Deadletter,
  deadletterBatch,
  sourceDeadletters,
  wholeBatchDeadletters,
} from '../runner/deadletters.js'
import { resumePositions } from '../runner/run-parts.js'
import { walBackend } from '../runner/wal-backend.js'
import type { PipelineCatalog, PipelineHandle } from './catalog.js'
import { BatchAsideError } from './errors.js'

export const BATCH_DEADLETTERED = 'SKIPPR_BATCH_DEADLETTERED'
export const BATCH_DISCARDED = 'SKIPPR_BATCH_DISCARDED'

export async function setBatchAside(
  how: 'deadletter' | 'discard',
  seq: bigint,
  pipeline: PipelineHandle,
  catalog: PipelineCatalog,
  lease: Lease,
): Promise<string> {
  const { settings, state } = pipeline
  const name = settings.name
  const wal = await openWal({
    pipeline: name,
    dataDir: settings.dataDir,
    backend: walBackend(settings, pipeline.state),
    positions: resumePositions(state, lease.token),
  })
  try {
    const batch = await oldestPending(wal.pending())
    if (batch === undefined) throw new BatchAsideError(`pipeline '${name}' has no pending batch`)
    if (batch.id.seq !== seq)
      throw new BatchAsideError(
        `batch ${seq} is not the oldest pending batch of pipeline '${name}': batch ${batch.id.seq} is (${batchKey(batch.id)}); the WAL lands in order, so set that one aside first`,
      )
    const key = batchKey(batch.id)
    const failure = (await state.landingFailures.read()).find(
      (f) => f.epoch === batch.id.epoch && f.seq === batch.id.seq,
    )
    const lastError = failure ? `; its last landing error: ${failure.lastError}` : ''
    const rows = wholeBatchDeadletters(
      batch,
      `set aside whole by ${how.toUpperCase()} BATCH ${seq} IN PIPELINE ${name}${lastError}`,
      how === 'deadletter' ? BATCH_DEADLETTERED : BATCH_DISCARDED,
    )
    // The records the source set aside may have landed already (beside a write that then failed):
    // under their own identity, they land once either way.
    const fromSource = sourceDeadletters(batch)
    const deadletters = [...fromSource, ...rows]
    if (how === 'deadletter')
      await landDeadletters(
        catalog,
        pipeline,
        batch,
        [
          ['source', fromSource],
          ['moved', rows],
        ],
        lease,
      )
    else
      catalog.log.warn(
        { pipeline: name, batch: key, rows: deadletters.length },
        `Discarded ${deadletters.length} records of batch ${key} (DISCARD BATCH)`,
      )
    await wal.markLanded(batch.id)
    await state.counters.recordLanded(batch.id, countedParts([], deadletters))
    await state.landingFailures.forgetThrough(batch.id)
    const where =
      how === 'deadletter'
        ? `moved to deadletter_sinks.${settings.deadletterSinkEntry} (_dl_${name})`
        : 'discarded'
    return `Batch ${key} of pipeline '${name}' ${where}: ${deadletters.length} records. The next sync lands on from batch ${seq + 1n}.`
  } finally {
    await wal.close()
  }
}

async function oldestPending(batches: AsyncGenerator<WalBatch>): Promise<WalBatch | undefined> {
  try {
    return (await batches.next()).value ?? undefined
  } finally {
    await batches.return(undefined)
  }
}

async function landDeadletters(
  catalog: PipelineCatalog,
  pipeline: PipelineHandle,
  batch: WalBatch,
  stages: readonly (readonly [DeadletterStage, readonly Deadletter[]])[],
  lease: Lease,
): Promise<void> {
  const name = pipeline.settings.name
  const sink: Sink | undefined = await catalog.openDeadletterSink(pipeline.settings)
  if (!sink)
    throw new BatchAsideError(
      `pipeline '${name}' has no deadletter_sink: add one (deadletter_sinks: in skippr.yml, deadletter_sink: on the pipeline), or drop the batch with DISCARD BATCH ${batch.id.seq} IN PIPELINE ${name}`,
    )
  try {
    for (const [stage, deadletters] of stages) {
      if (deadletters.length === 0) continue
      const dlBatch = deadletterBatch({ id: batch.id, fence: lease.token }, stage, deadletters, new Date())
      for (const part of dlBatch.parts) await sink.prepare(part.schema)
      const outcome: WriteOutcome = await sink.write(dlBatch)
      if (outcome.status === 'landed' || outcome.status === 'already-landed') continue
      const reason = 'error' in outcome ? outcome.error.message : `it refused ${outcome.rows.length} of them`
      throw new BatchAsideError(
        `the deadletter sink did not take batch ${batchKey(batch.id)}: ${reason}; nothing was marked landed, run the statement again`,
      )
    }
  } finally {
    await sink.close()
  }
}
