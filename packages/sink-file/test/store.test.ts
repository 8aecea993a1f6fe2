import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { objectStoreSuite } from '@skippr/conformance'
import { LocalStore } from '../src/index.js'

let root = ''
objectStoreSuite({
  name: 'local directory',
  setup: async () => {
    root = await mkdtemp(path.join(tmpdir(), 'skippr-local-store-'))
  },
  createStore: async () => new LocalStore(path.join(root, 'out')),
  cleanup: () => rm(root, { recursive: true, force: true }),
})
