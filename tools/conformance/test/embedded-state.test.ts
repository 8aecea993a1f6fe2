import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { embeddedStore } from '@skippr/state'
import { stateBackendSuite } from '../src/index.js'

let dataDir = ''

stateBackendSuite({
  name: 'sled (embedded LMDB)',
  async setup() {
    dataDir = await mkdtemp(path.join(tmpdir(), 'skippr-state-contract-'))
  },
  open: () => embeddedStore.open({ dataDir }),
  async cleanup() {
    await rm(dataDir, { recursive: true, force: true })
  },
})
