import { exactlyOnceSuite } from '@skippr/conformance'
import type { FakeSnowflake } from '@skippr/test-servers'
import { openSink, SCHEMA, startFakeSnowflake } from './fake.js'

let server: FakeSnowflake

exactlyOnceSuite({
  name: 'snowflake (local fake server)',
  async setup() {
    server = await startFakeSnowflake()
  },
  async createSink() {
    return openSink(server)
  },
  readRows: (namespace) => server.rows(SCHEMA, namespace),
  async cleanup() {
    await server.stop()
  },
})
