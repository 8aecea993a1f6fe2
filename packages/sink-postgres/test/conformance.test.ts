import { exactlyOnceSuite, renameColumnSuite, type SinkHarness } from '@skippr/conformance'
import { sink } from '../src/index.js'
import type { TestDb } from './db.js'
import { freshSchema } from './db.js'

let db: TestDb

const harness: SinkHarness = {
  name: 'postgres',
  async setup() {
    db = await freshSchema()
  },
  async createSink() {
    return db.sink()
  },
  readRows: (namespace) => db.rows(namespace),
  async cleanup() {
    await db.drop()
  },
}
exactlyOnceSuite(harness)
renameColumnSuite(sink, harness)
