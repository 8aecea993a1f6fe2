import { existsSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DynaliteServer, type DynamoDbLocal, startDynalite, startDynamoDbLocal } from '../src/index.js'
import { pidsWithArgument, refusesConnections } from './processes.js'

/** The parts of DynamoDB's answers these tests look at. */
interface Answer {
  readonly TableNames?: string[]
  readonly TableDescription?: { readonly TableStatus?: string }
}

/**
 * One DynamoDB JSON API call. Neither server checks the signature, only that a well-formed
 * SigV4 `authorization` header names an access key.
 */
async function call(
  endpoint: string,
  operation: string,
  body: object,
): Promise<{ status: number; json: Answer }> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDB_20120810.${operation}`,
      'x-amz-date': '20260101T000000Z',
      authorization:
        'AWS4-HMAC-SHA256 Credential=skipprtest/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=00',
      connection: 'close',
    },
    body: JSON.stringify(body),
  })
  return { status: response.status, json: (await response.json()) as Answer }
}

const TABLE = {
  TableName: 'skippr-test',
  AttributeDefinitions: [{ AttributeName: 'PK', AttributeType: 'S' }],
  KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }],
  BillingMode: 'PAY_PER_REQUEST',
}

describe('dynalite', () => {
  let dynalite: DynaliteServer
  beforeAll(async () => {
    dynalite = await startDynalite()
  })
  afterAll(async () => {
    await dynalite?.stop()
  })

  it('answers DynamoDB calls on 127.0.0.1, with no tables to begin with', async () => {
    expect(dynalite.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(await call(dynalite.endpoint, 'ListTables', {})).toEqual({ status: 200, json: { TableNames: [] } })
  })

  it('keeps a new table CREATING for a while, as AWS does', async () => {
    const created = await call(dynalite.endpoint, 'CreateTable', TABLE)
    expect(created.json.TableDescription?.TableStatus).toBe('CREATING')
  })

  it('frees its port on stop, and a second stop is harmless', async () => {
    await call(dynalite.endpoint, 'ListTables', {})
    await dynalite.stop()
    await dynalite.stop()
    expect(await refusesConnections(Number(new URL(dynalite.endpoint).port))).toBe(true)
  })
})

describe('DynamoDB Local', () => {
  let local: DynamoDbLocal
  beforeAll(async () => {
    local = await startDynamoDbLocal()
  }, 60_000)
  afterAll(async () => {
    await local?.stop()
  })

  it('answers DynamoDB calls, with tables ACTIVE at once', async () => {
    expect(local.endpoint).toBe(`http://127.0.0.1:${local.port}`)
    expect(await call(local.endpoint, 'ListTables', {})).toEqual({ status: 200, json: { TableNames: [] } })
    const created = await call(local.endpoint, 'CreateTable', TABLE)
    expect(created.json.TableDescription?.TableStatus).toBe('ACTIVE')
  })

  it('runs without telemetry, which would write a metadata file to its working directory', async () => {
    expect(await readdir(local.dir)).toEqual(['dynamodb-local.log'])
    expect(existsSync('dynamodb-local-metadata.json')).toBe(false)
  })

  it('leaves no process, port or dir behind after stop', async () => {
    const port = String(local.port)
    expect(pidsWithArgument(port)).toHaveLength(1)
    await local.stop()
    expect(pidsWithArgument(port)).toEqual([])
    expect(await refusesConnections(local.port)).toBe(true)
    expect(existsSync(local.dir)).toBe(false)
  })
})
