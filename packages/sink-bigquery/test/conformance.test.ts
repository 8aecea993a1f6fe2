import { exactlyOnceSuite } from '@skippr/conformance'
import type { FakeBigquery } from '@skippr/test-servers'
import { DATASET, openSink, startFakeBigquery } from './fake.js'

let server: FakeBigquery

exactlyOnceSuite({
  name: 'bigquery (local fake server)',
  async setup() {
    server = await startFakeBigquery()
  },
  async createSink() {
    return openSink(server)
  },
  readRows: (namespace) => server.rows(DATASET, namespace),
  async cleanup() {
    await server.stop()
  },
})
