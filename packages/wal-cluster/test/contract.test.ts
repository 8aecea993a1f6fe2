import { walBackendSuite } from '@skippr/conformance'
import type { WalPeer } from '../src/index.js'
import { clusteredWal } from '../src/index.js'
import { clusterPeers, removeTempDirs, SECRET, startPeer, stateStore, tempDir } from './support.js'

let peer: WalPeer

walBackendSuite({
  name: 'clustered (one peer in this process)',
  async setup() {
    peer = await startPeer(await tempDir())
    return {
      backend: clusteredWal({
        nodeId: 'leader',
        peers: clusterPeers([peer.url]),
        secret: SECRET,
        fencingToken: 1n,
        inSync: await stateStore(),
        commitTimeoutMs: 10_000,
      }),
      dataDir: await tempDir(),
    }
  },
  async cleanup() {
    await peer.close()
    await removeTempDirs()
  },
})
