import { walBackendSuite } from '@skippr/conformance'
import type { WalPeer } from '../src/index.js'
import { clusteredWal } from '../src/index.js'
import { removeTempDirs, SECRET, startPeer, tempDir } from './support.js'

let peer: WalPeer

walBackendSuite({
  name: 'clustered (one peer in this process)',
  async setup() {
    peer = await startPeer(await tempDir())
    return {
      backend: clusteredWal({ peers: [peer.url], secret: SECRET, fencingToken: 1n, commitTimeoutMs: 10_000 }),
      dataDir: await tempDir(),
    }
  },
  async cleanup() {
    await peer.close()
    await removeTempDirs()
  },
})
