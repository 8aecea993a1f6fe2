/** What the tests share: AWS settings of their own, and stores on a test server's endpoint. */
import { randomBytes } from 'node:crypto'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { StateBackend, StoreOpenOptions } from '@skippr/state'
import { vi } from 'vitest'
import { dynamoDbStore } from '../src/index.js'

export const REGION = 'eu-west-1'
// DynamoDB Local keeps one database per access key and region; dynalite takes any.
const CREDENTIALS = { accessKeyId: 'skipprtest', secretAccessKey: 'skipprtestsecret' }

/** The standard AWS chain sees only these settings, whatever the machine's environment holds. */
export function stubAwsEnv(): void {
  vi.stubEnv('AWS_REGION', REGION)
  vi.stubEnv('AWS_ACCESS_KEY_ID', CREDENTIALS.accessKeyId)
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', CREDENTIALS.secretAccessKey)
  for (const name of ['AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_DYNAMODB']) {
    vi.stubEnv(name, undefined)
  }
}

/** A table name no other case (or earlier run) uses. */
export function tableName(label: string): string {
  return `skippr-${label}-${randomBytes(4).toString('hex')}`
}

export function openStore(
  endpoint: string | undefined,
  options: Omit<StoreOpenOptions, 'dataDir' | 'endpoint'>,
): Promise<StateBackend> {
  return dynamoDbStore.open({ dataDir: '', endpoint, ...options })
}

/** A client of its own, to look at the table from outside the backend. */
export function rawClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: REGION, credentials: CREDENTIALS })
}
