import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { isProcessAlive } from '@skippr/connector-api'

/**
 * Lease owner ids of the form `<label> <host>:<pid>:<instance>`. They let a new writer on the same
 * host see at once that the previous holder's process is gone (killed, crashed) instead of waiting
 * for the lease's TTL. The instance id makes the owner unique even when a PID is reused.
 */
export function localOwnerId(label = 'skipprd'): string {
  return `${label} ${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
}

/**
 * True only when `owner` names a process on this host that no longer exists. Unknown formats,
 * other hosts and live PIDs (even a recycled one) answer false: the caller then waits for the TTL,
 * which is always safe.
 */
export function isLocalOwnerGone(owner: string): boolean {
  const match = /(?:^|\s)([^\s:]+):(\d+):[0-9a-f]+$/.exec(owner)
  if (!match || match[1] !== hostname()) return false
  const pid = Number(match[2])
  return pid !== process.pid && !isProcessAlive(pid)
}
