/**
 * The DynamoDB store beyond the backend contract, on one test server: opening the table, the item
 * layout, a StateStore's lease and fencing, and the errors.
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
} from '@aws-sdk/client-dynamodb'
import { LEASE_UNAVAILABLE, STALE_FENCE, type StateBackend, StateStore } from '@skippr/state'
import { freePorts } from '@skippr/test-servers'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  DYNAMODB_ACCESS_DENIED,
  DYNAMODB_CONFIG_INVALID,
  DYNAMODB_ITEM_TOO_LARGE,
  DYNAMODB_TABLE_MISMATCH,
  DYNAMODB_TABLE_MISSING,
  DYNAMODB_UNAVAILABLE,
} from '../src/index.js'
import { openStore, REGION, rawClient, stubAwsEnv, tableName } from './support.js'

export interface TestServer {
  readonly endpoint: string
  stop(): Promise<void>
}

export interface StoreCasesOptions {
  readonly name: string
  start(): Promise<TestServer>
  /** DynamoDB Local refuses malformed access keys; dynalite takes any. */
  readonly checksCredentials: boolean
}

export function storeCases(options: StoreCasesOptions): void {
  describe(`dynamodb store (${options.name})`, () => {
    let server: TestServer
    let raw: DynamoDBClient
    let table: string
    const opened: StateBackend[] = []
    const open = async (settings: Parameters<typeof openStore>[1], endpoint = server.endpoint) => {
      const backend = await openStore(endpoint, settings)
      opened.push(backend)
      return backend
    }

    beforeAll(async () => {
      stubAwsEnv()
      server = await options.start()
      raw = rawClient(server.endpoint)
      table = tableName('store')
      await open({ name: table, create: true })
    })
    afterEach(() => {
      // A case's own variables go; the file's AWS settings stay.
      stubAwsEnv()
    })
    afterAll(async () => {
      await Promise.all(opened.splice(0).map((backend) => backend.close()))
      raw?.destroy()
      await server?.stop()
      vi.unstubAllEnvs()
    })

    it('refuses a missing table, naming it, the region and the fix, and creates nothing', async () => {
      const missing = tableName('missing')
      await expect(open({ name: missing })).rejects.toMatchObject({
        code: DYNAMODB_TABLE_MISSING,
        transient: false,
        message: `the state store's dynamodb table '${missing}' in ${REGION} does not exist: create it, or pass --create-store`,
      })
      await expect(raw.send(new DescribeTableCommand({ TableName: missing }))).rejects.toMatchObject({
        name: 'ResourceNotFoundException',
      })
    })

    it('creates the table with create: true, ACTIVE, keyed PK/SK, on demand', async () => {
      const created = tableName('created')
      const backend = await open({ name: created, create: true })
      const { Table } = await raw.send(new DescribeTableCommand({ TableName: created }))
      expect(Table).toMatchObject({
        TableStatus: 'ACTIVE',
        KeySchema: [
          { AttributeName: 'PK', KeyType: 'HASH' },
          { AttributeName: 'SK', KeyType: 'RANGE' },
        ],
        BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
      })
      const key = 'ws/pipelines/p/resume'
      await backend.put(key, 1)
      // Opened again, without create, by another process: the same table and data.
      expect((await (await open({ name: created })).get(key))?.value).toBe(1)
    })

    it('refuses a table with other keys', async () => {
      const other = tableName('other')
      await raw.send(
        new CreateTableCommand({
          TableName: other,
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      )
      await expect(open({ name: other, create: true })).rejects.toMatchObject({
        code: DYNAMODB_TABLE_MISMATCH,
        message: expect.stringContaining(`has the keys id (HASH, S), not PK (HASH, S), SK (RANGE, S)`),
      })
    })

    it('needs a table name, and a region', async () => {
      await expect(open({ name: undefined })).rejects.toMatchObject({
        code: DYNAMODB_CONFIG_INVALID,
        message: 'the dynamodb state store needs a table name: set --store-name or SKIPPR_STORE_NAME',
      })
      vi.stubEnv('AWS_REGION', undefined)
      vi.stubEnv('AWS_CONFIG_FILE', path.join(tmpdir(), tableName('no-aws-config')))
      await expect(open({ name: table })).rejects.toMatchObject({
        code: DYNAMODB_CONFIG_INVALID,
        message: expect.stringContaining('needs an AWS region: set AWS_REGION'),
      })
    })

    it('keeps one item per key: PK <tenant>#<workspace>#<pipeline>, SK lease or state/<record>', async () => {
      const store = new StateStore(await open({ name: table }), { workspace: 'ws' })
      const lease = await store.pipeline('orders').acquireLease({ owner: 'test', heartbeatIntervalMs: 0 })
      await store.pipeline('orders').saveResumeOffset({ lsn: 7 }, { fence: lease.token })
      const item = (PK: string, SK: string) =>
        raw.send(
          new GetItemCommand({
            TableName: table,
            Key: { PK: { S: PK }, SK: { S: SK } },
            ConsistentRead: true,
          }),
        )
      const resume = (await item('default#ws#orders', 'state/resume')).Item
      expect(resume?.version?.N).toMatch(/^\d+$/)
      expect(JSON.parse(resume?.value?.S ?? '')).toEqual({ offset: { lsn: 7 }, fence: String(lease.token) })
      const leaseItem = (await item('default#ws#orders', 'lease')).Item
      expect(JSON.parse(leaseItem?.value?.S ?? '')).toMatchObject({
        owner: 'test',
        token: String(lease.token),
      })

      const tenant = new StateStore(await open({ name: table, tenant: 'acme' }), { workspace: 'ws' })
      await tenant.pipeline('orders').saveResumeOffset(1)
      expect((await item('acme#ws#orders', 'state/resume')).Item).toBeDefined()
      expect(await store.pipeline('orders').getResumeOffset()).toEqual({ lsn: 7 })
    })

    it('runs a StateStore: lease, fenced resume writes, a refused second writer, STALE_FENCE after a takeover', async () => {
      const first = new StateStore(await open({ name: table }), { workspace: 'e2e' })
      const second = new StateStore(await open({ name: table }), { workspace: 'e2e' })
      const ttlMs = 1_000
      const lease = await first.pipeline('p').acquireLease({ owner: 'first', ttlMs, heartbeatIntervalMs: 0 })
      await first.pipeline('p').saveResumeOffset(1, { fence: lease.token })
      expect(await second.pipeline('p').getResumeOffset()).toBe(1)

      await expect(
        second.pipeline('p').acquireLease({ owner: 'second', ttlMs, waitMs: 100, pollMs: 20 }),
      ).rejects.toMatchObject({ code: LEASE_UNAVAILABLE, holder: { owner: 'first', token: lease.token } })

      // No heartbeat for ttlMs: the second writer takes over, with a greater token.
      const takeover = await second
        .pipeline('p')
        .acquireLease({ owner: 'second', ttlMs, waitMs: 5_000, pollMs: 50, heartbeatIntervalMs: 0 })
      expect(takeover.token).toBeGreaterThan(lease.token)
      await expect(first.pipeline('p').saveResumeOffset(2, { fence: lease.token })).rejects.toMatchObject({
        code: STALE_FENCE,
      })
      await second.pipeline('p').saveResumeOffset(3, { fence: takeover.token })
      expect(await first.pipeline('p').getResumeOffset()).toBe(3)
    })

    it('refuses a value over 400 KB, naming the key, as permanent', async () => {
      const backend = await open({ name: table })
      const key = 'big/pipelines/p/schema/ns/0000000001'
      const value = 'x'.repeat(400 * 1024)
      const refusal = {
        code: DYNAMODB_ITEM_TOO_LARGE,
        transient: false,
        message: expect.stringContaining(`'${key}'`),
      }
      await expect(backend.put(key, value)).rejects.toMatchObject(refusal)
      await expect(backend.put(key, value, { mustNotExist: true })).rejects.toMatchObject(refusal)
      expect(await backend.get(key)).toBeUndefined()
    })

    it('reports a server that does not answer as transient', async () => {
      const [port] = await freePorts(1)
      await expect(open({ name: table }, `http://127.0.0.1:${port}`)).rejects.toMatchObject({
        code: DYNAMODB_UNAVAILABLE,
        transient: true,
        message: expect.stringMatching(
          /^opening the state store in dynamodb table .* this is transient, retry later$/,
        ),
      })
    })

    it('uses AWS_ENDPOINT_URL_DYNAMODB when no endpoint is given', async () => {
      vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', server.endpoint)
      const backend = await open({ name: table }, undefined)
      await backend.put('env/pipelines/p/resume', 'via env')
      expect((await (await open({ name: table })).get('env/pipelines/p/resume'))?.value).toBe('via env')
    })

    // Only a server that checks credentials can refuse them (dynalite takes any): not registered otherwise.
    if (options.checksCredentials)
      it('reports refused credentials as permanent, without the secret', async () => {
        // DynamoDB Local takes any well-formed key (a database of its own); it refuses one with symbols.
        vi.stubEnv('AWS_ACCESS_KEY_ID', 'bad-key!')
        vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret-that-must-not-show')
        const refused = await open({ name: table }).catch((error: Error) => error)
        expect(refused).toMatchObject({ code: DYNAMODB_ACCESS_DENIED, transient: false })
        expect((refused as Error).message).not.toContain('secret-that-must-not-show')
      })
  })
}
