import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { StateStoreType } from '@skippr/state'
import { DynamoDbBackend } from './dynamodb-backend.js'
import { DYNAMODB_CONFIG_INVALID, DynamoDbStateError } from './errors.js'
import { openTable } from './table.js'

/**
 * Without a timeout the SDK waits for an answer for ever, and a lease whose heartbeat hangs is never
 * found lost. DynamoDB answers in milliseconds; these are for a network that stopped answering.
 */
const CONNECTION_TIMEOUT_MS = 3_000
const REQUEST_TIMEOUT_MS = 10_000

/**
 * `--store-type dynamodb`: the table is `--store-name`; the endpoint is `skippr.store.endpoint`, or
 * else the SDK's own (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL`, then the region's); the region
 * and credentials come from the standard AWS chain (`AWS_REGION`, `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`,
 * a profile, a role).
 */
export const dynamoDbStore: StateStoreType = {
  name: 'dynamodb',
  async open(options) {
    const table = options.name
    if (!table) {
      throw configError('the dynamodb state store needs a table name: set --store-name or SKIPPR_STORE_NAME')
    }
    const client = new DynamoDBClient({
      ...(options.endpoint === undefined ? {} : { endpoint: endpointUrl(options.endpoint) }),
      requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
    })
    try {
      const ref = { table, region: await regionOf(client) }
      await openTable(client, ref, options.create ?? false)
      return new DynamoDbBackend({ client, table: ref, tenant: options.tenant })
    } catch (error) {
      client.destroy()
      throw error
    }
  },
}

/** Checked here: the SDK would fail on the first request with an error that looks like a network one. */
function endpointUrl(endpoint: string): string {
  if (URL.canParse(endpoint)) return endpoint
  throw configError(
    `the dynamodb state store's endpoint '${endpoint}' is not a URL: set skippr.store.endpoint to one like ` +
      'http://127.0.0.1:8000, or leave it out to use the region endpoint',
  )
}

async function regionOf(client: DynamoDBClient): Promise<string> {
  try {
    return await client.config.region()
  } catch (error) {
    throw configError(
      'the dynamodb state store needs an AWS region: set AWS_REGION (or a region in the AWS profile)',
      error,
    )
  }
}

function configError(message: string, cause?: unknown): DynamoDbStateError {
  return new DynamoDbStateError(DYNAMODB_CONFIG_INVALID, message, false, cause)
}
