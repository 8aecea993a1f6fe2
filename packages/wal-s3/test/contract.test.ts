import { walBackendSuite } from '@skippr/conformance'
import { type S3WalWorld, startS3WalWorld } from './support.js'

let world: S3WalWorld

walBackendSuite({
  name: 's3 (s3rver, records in the embedded state store)',
  async setup() {
    world = await startS3WalWorld()
    return { backend: world.wal(), dataDir: await world.dataDir() }
  },
  cleanup: () => world.stop(),
})
