import { stateBackendSuite } from '@skippr/conformance'
import { type DynamoDbLocal, startDynamoDbLocal } from '@skippr/test-servers'
import { vi } from 'vitest'
import { openStore, stubAwsEnv, tableName } from './support.js'

let server: DynamoDbLocal | undefined
const table = tableName('contract')

stateBackendSuite({
  name: 'dynamodb (DynamoDB Local)',
  async setup() {
    stubAwsEnv()
    server = await startDynamoDbLocal()
    await (await openStore(server.endpoint, { name: table, create: true })).close()
  },
  open: () => openStore(server!.endpoint, { name: table }),
  async cleanup() {
    await server?.stop()
    vi.unstubAllEnvs()
  },
})
