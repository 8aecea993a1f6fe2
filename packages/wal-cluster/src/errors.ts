/**
 * The clustered WAL's failures, each one line naming the pipeline and the peers (never the secret).
 * Identify them by `code`, as every WalError.
 */
import { WalError } from '@skippr/wal'

/**
 * Not every member of the in-sync set (at least one) confirmed a frame in time: transient (the pipeline's run fails, the next run reopens
 * the log and goes on once a peer is back). The frame stays in the leader's log, so the backend stops
 * taking appends until it is reopened: the WAL then treats the frame as committed, as it treats a frame
 * a crash left durable, and the source resumes after it.
 */
export const WAL_CLUSTER_NO_PEER = 'WAL_CLUSTER_NO_PEER'
/** Every peer refused this leader for good: an older fencing token, or a wrong bearer token. */
export const WAL_CLUSTER_REFUSED = 'WAL_CLUSTER_REFUSED'
/** An option of clusteredWal() or startWalPeer() is unusable. */
export const WAL_CLUSTER_CONFIG = 'WAL_CLUSTER_CONFIG'

export function noPeerError(pipeline: string, what: string, timeoutMs: number, peers: string): WalError {
  return new WalError(
    WAL_CLUSTER_NO_PEER,
    `clustered WAL of pipeline ${pipeline}: the in-sync set did not confirm ${what} within ${timeoutMs} ms (${peers}); ` +
      'the WAL takes no commit on one copy: start a peer, or check the network to it',
  )
}

export function refusedError(pipeline: string, peers: string): WalError {
  return new WalError(
    WAL_CLUSTER_REFUSED,
    `clustered WAL of pipeline ${pipeline}: every peer refused it (${peers})`,
  )
}

export function configError(problem: string): WalError {
  return new WalError(WAL_CLUSTER_CONFIG, `clustered WAL: ${problem}`)
}

/** The in-sync set is held under a newer fencing token (or changed under this writer): this leader is fenced. */
export const WAL_CLUSTER_FENCED = 'WAL_CLUSTER_FENCED'
/** A node outside the in-sync set tried to lead: its copy may lack committed frames. */
export const WAL_CLUSTER_NOT_ELECTABLE = 'WAL_CLUSTER_NOT_ELECTABLE'

export function fencedError(key: string, why: string): WalError {
  return new WalError(WAL_CLUSTER_FENCED, `clustered WAL: the in-sync set ${key} refused this leader: ${why}`)
}

export function notElectableError(
  key: string,
  nodeId: string,
  record: { readonly leader: string; readonly members: readonly string[] },
): WalError {
  return new WalError(
    WAL_CLUSTER_NOT_ELECTABLE,
    `clustered WAL: node ${nodeId} is not in the in-sync set ${key} (leader ${record.leader}, members ` +
      `${record.members.join(', ') || 'none'}), so its copy may lack committed frames`,
  )
}
