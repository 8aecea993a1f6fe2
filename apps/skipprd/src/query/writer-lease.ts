/**
 * The pipeline's writer lease, taken by a statement that changes what a sync uses (RESET, DROP,
 * DEADLETTER/DISCARD BATCH, schema changes) for the moment it runs, without waiting: if a sync
 * holds it, the statement is refused and nothing is touched; a sync that starts meanwhile waits.
 */
import {
  hasCode,
  isLocalOwnerGone,
  LEASE_UNAVAILABLE,
  type Lease,
  type LeaseUnavailableError,
  localOwnerId,
} from '@skippr/state'
import type { PipelineHandle } from './catalog.js'
import { PipelineBusyError } from './errors.js'

/** Runs `work` holding the writer lease; refuses at once if a sync holds it. */
export async function withLease<T>(
  pipeline: PipelineHandle,
  statement: string,
  work: (lease: Lease) => Promise<T>,
): Promise<T> {
  let lease: Lease
  try {
    lease = await pipeline.state.acquireLease({
      owner: localOwnerId('skipprd query'),
      isHolderGone: isLocalOwnerGone,
      waitMs: 0,
      heartbeatIntervalMs: 0,
    })
  } catch (error) {
    if (!hasCode(error, LEASE_UNAVAILABLE)) throw error
    const info = await pipeline.state.getLeaseInfo()
    throw new PipelineBusyError(
      statement,
      pipeline.settings.name,
      (error as LeaseUnavailableError).holder,
      info?.ttlMs ?? 30_000,
    )
  }
  try {
    return await work(lease)
  } finally {
    await lease.release()
  }
}
