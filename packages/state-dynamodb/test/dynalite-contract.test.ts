import { stateBackendSuite } from '@skippr/conformance'
import { type DynaliteServer, startDynalite } from '@skippr/test-servers'
import { vi } from 'vitest'
import { openStore, stubAwsEnv, tableName } from './support.js'

let server: DynaliteServer | undefined
const table = tableName('contract')

stateBackendSuite({
  name: 'dynamodb (dynalite)',
  async setup() {
    stubAwsEnv()
    server = await startDynalite()
    await (await openStore(server.endpoint, { name: table, create: true })).close()
  },
  open: () => openStore(server!.endpoint, { name: table }),
  async cleanup() {
    await server?.stop()
    vi.unstubAllEnvs()
  },
})
