import { exactlyOnceSuite } from '@skippr/conformance'
import type { TestDb } from './db.js'
import { freshSchema } from './db.js'

let db: TestDb

exactlyOnceSuite({
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
})
