/**
 * A sync node of `WAL_STORAGE=clustered`: for as long as the sync runs, its peer server keeps the
 * other nodes' copies of the pipeline's WAL in this node's DATA_DIR. When the node takes the writer
 * lease, its peer lets go of that copy and the node opens it as the leader's log, under the lease's
 * fencing token, so it continues after every frame a member held (@skippr/wal-cluster's takeover).
 */
import type { PipelineState, StateStore } from '@skippr/state'
import type { WalBackendType } from '@skippr/wal'
import type { Logger } from 'pino'
import type { ClusterSettings } from '../config/cluster.js'
import type { PipelineSettings } from '../config/settings.js'
import { connectorLogger } from '../logging.js'
import { loadCluster } from './wal-backend.js'

export interface ClusterNode {
  /** The backend type of the pipeline's WAL for the holder of its writer lease (`token`). */
  leader(state: PipelineState, token: bigint): WalBackendType
  close(): Promise<void>
}

/** Starts the node's peer server on SKIPPR_CLUSTER_LISTEN over the pipeline's DATA_DIR. */
export async function startClusterNode(
  settings: PipelineSettings,
  cluster: ClusterSettings,
  store: StateStore,
  logger: Logger,
): Promise<ClusterNode> {
  const walCluster = await loadCluster(settings)
  const log = connectorLogger(logger.child({ node: cluster.nodeId }))
  const peer = await walCluster.startWalPeer({
    host: cluster.listen.host,
    port: cluster.listen.port,
    dataDir: settings.dataDir,
    secret: cluster.secret,
    logger: log,
  })
  logger.info({ node: cluster.nodeId, listen: peer.url }, 'wal-cluster peer listening')
  return {
    leader: (state, token) => {
      const backend = walCluster.clusteredWal({
        nodeId: cluster.nodeId,
        peers: cluster.peers,
        secret: cluster.secret,
        fencingToken: token,
        inSync: store.backend,
        inSyncKey: inSyncStateKey(state),
      })
      return {
        ...backend,
        open: async (options) => {
          await peer.release(state.name)
          return backend.open(options)
        },
      }
    },
    close: () => peer.close(),
  }
}

/**
 * The set's key among the pipeline's own records (`<ws>/pipelines/<pipeline>/…`, @skippr/state's
 * key layout), so a partitioned store keeps it in the pipeline's partition.
 */
function inSyncStateKey(state: PipelineState): string {
  return `${encodeURIComponent(state.workspace)}/pipelines/${encodeURIComponent(state.name)}/wal-in-sync`
}
