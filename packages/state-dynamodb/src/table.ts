/**
 * The state table at open: it must exist (or be created with `--create-store`), be ACTIVE, and have
 * the key schema the backend writes: `PK` (string) partition key, `SK` (string) sort key.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  type TableDescription,
} from '@aws-sdk/client-dynamodb'
import {
  classify,
  DYNAMODB_TABLE_MISMATCH,
  DYNAMODB_UNAVAILABLE,
  DynamoDbStateError,
  TableMissingError,
  type TableRef,
  tableName,
} from './errors.js'

/** What the backend's items need, as `name (KeyType, AttributeType)`. */
const EXPECTED_KEYS = 'PK (HASH, S), SK (RANGE, S)'
const ACTIVE_TIMEOUT_MS = 120_000
const POLL_MS = 250

/** Resolves once the table is ACTIVE with the expected keys; creates it first when missing and `create`. */
export async function openTable(client: DynamoDBClient, ref: TableRef, create: boolean): Promise<void> {
  let table = await describeTable(client, ref)
  if (table === undefined) {
    if (!create) throw new TableMissingError(ref)
    await createTable(client, ref)
  }
  if (table?.TableStatus !== 'ACTIVE') table = await waitUntilActive(client, ref)
  checkKeys(table, ref)
}

async function describeTable(client: DynamoDBClient, ref: TableRef): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: ref.table }))).Table
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined
    throw classify(error, 'opening the state store', ref)
  }
}

async function createTable(client: DynamoDBClient, ref: TableRef): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: ref.table,
        AttributeDefinitions: [
          { AttributeName: 'PK', AttributeType: 'S' },
          { AttributeName: 'SK', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'PK', KeyType: 'HASH' },
          { AttributeName: 'SK', KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    )
  } catch (error) {
    // Another process created it first: wait for it like for our own, then check its keys.
    if (error instanceof ResourceInUseException) return
    throw classify(error, 'creating the state store table', ref)
  }
}

/**
 * Our own poll rather than the SDK's `waitUntilTableExists`: that one retries every error, access
 * denied included, until its time is up, and waits 20 s between looks by default.
 */
async function waitUntilActive(client: DynamoDBClient, ref: TableRef): Promise<TableDescription> {
  const deadline = Date.now() + ACTIVE_TIMEOUT_MS
  for (;;) {
    const table = await describeTable(client, ref)
    if (table?.TableStatus === 'ACTIVE') return table
    if (Date.now() > deadline) {
      throw new DynamoDbStateError(
        DYNAMODB_UNAVAILABLE,
        `the state store's ${tableName(ref)} is ${table?.TableStatus ?? 'missing'}, not ACTIVE, after ` +
          `${ACTIVE_TIMEOUT_MS / 1000} s; this is transient, retry later`,
        true,
      )
    }
    await sleep(POLL_MS)
  }
}

function checkKeys(table: TableDescription, ref: TableRef): void {
  const types = new Map(table.AttributeDefinitions?.map((a) => [a.AttributeName, a.AttributeType]))
  const found = (table.KeySchema ?? [])
    .map((key) => `${key.AttributeName} (${key.KeyType}, ${types.get(key.AttributeName)})`)
    .join(', ')
  if (found !== EXPECTED_KEYS) {
    throw new DynamoDbStateError(
      DYNAMODB_TABLE_MISMATCH,
      `the state store's ${tableName(ref)} has the keys ${found || 'none'}, not ${EXPECTED_KEYS}: ` +
        'give --store-name a table made for the state store (or let --create-store make one)',
      false,
    )
  }
}
