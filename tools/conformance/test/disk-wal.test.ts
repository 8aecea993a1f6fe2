import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { diskWal } from '@skippr/wal'
import { walBackendSuite } from '../src/index.js'

let dataDir = ''

walBackendSuite({
  name: 'disk',
  async setup() {
    dataDir = await mkdtemp(path.join(tmpdir(), 'skippr-wal-contract-'))
    return { backend: diskWal, dataDir }
  },
  async cleanup() {
    await rm(dataDir, { recursive: true, force: true })
  },
})
