export type { ClusterRecord } from './cluster-record.js'
export {
  WAL_CLUSTER_CONFIG,
  WAL_CLUSTER_FENCED,
  WAL_CLUSTER_NO_PEER,
  WAL_CLUSTER_NOT_ELECTABLE,
  WAL_CLUSTER_REFUSED,
} from './errors.js'
export type { InSyncJson, InSyncRecord, InSyncStore } from './in-sync-set.js'
export { InSyncSet, inSyncKey } from './in-sync-set.js'
export type { WalPeer, WalPeerOptions } from './peer.js'
export { startWalPeer } from './peer.js'
export { readPeerCopy } from './peer-copy.js'
export type { ClusteredWalOptions, ClusterPeer } from './replicated-backend.js'
export { clusteredWal, openClusteredSnapshot } from './replicated-backend.js'
