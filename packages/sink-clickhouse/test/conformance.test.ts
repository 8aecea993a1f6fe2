import { atLeastOnceSuite } from '@skippr/conformance'
import type { Engine } from '../src/index.js'
import { startTestServer, type TestServer } from './servers.js'

let server: TestServer | undefined
let users = 0

/** The suites share one server, started by the first and stopped by the last. */
function harness(engine: Engine) {
  const database = () => server?.database(engine.toLowerCase()) ?? ''
  return {
    name: `clickhouse ${engine}`,
    async setup() {
      users++
      server ??= await startTestServer()
    },
    async createSink() {
      return server!.sink({ database: database(), engine })
    },
    readRows: (namespace: string) => server!.rows(database(), namespace),
    async cleanup() {
      if (--users > 0) return
      await server?.stop()
      server = undefined
    },
  }
}

atLeastOnceSuite(harness('MergeTree'))
atLeastOnceSuite(harness('ReplicatedMergeTree'))
