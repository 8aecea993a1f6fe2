import { generateKeyPairSync } from 'node:crypto'
import { existsSync } from 'node:fs'
import { makeBatch, trickyRows } from '@skippr/conformance'
import { isPermanent, type NamespaceSchema } from '@skippr/connector-api'
import { countsSince, type FakeSnowflake } from '@skippr/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSink, SCHEMA, startFakeSnowflake } from './fake.js'

const schema = (namespace: string): NamespaceSchema => ({
  namespace,
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'long' },
    { name: 'name', type: 'string' },
    { name: 'qty', type: 'int' },
  ],
})
const batchOf = (namespace: string, seq: number, format: 'csv' | 'jsonl' = 'jsonl') =>
  makeBatch({
    pipeline: `p_${namespace}`,
    seq,
    parts: [{ schema: schema(namespace), format, rows: trickyRows(seq * 100) }],
  })

let server: FakeSnowflake

beforeAll(async () => {
  server = await startFakeSnowflake()
})
afterAll(async () => server.stop())

describe('landing', () => {
  it('a batch costs a PUT and five statements: BEGIN, the fence row, COPY (PURGE), the ledger row, COMMIT', async () => {
    const sink = openSink(server)
    await sink.prepare(schema('staged'))
    expect(await sink.write(batchOf('staged', 1, 'csv'))).toEqual({ status: 'landed', rows: 5 })
    const before = server.requestCounts()
    expect(await sink.write(batchOf('staged', 2, 'csv'))).toEqual({ status: 'landed', rows: 5 })
    const spent = countsSince(before, server.requestCounts())
    expect(spent).toEqual({
      'query PUT': 1,
      'query BEGIN': 1,
      'query UPDATE': 1,
      'query COPY': 1,
      'query INSERT': 1,
      'query COMMIT': 1,
    })
    // The COPY purged the staged file: no REMOVE, nothing left on the stage.
    expect(server.stagedFiles()).toEqual([])
    expect(await server.rows(SCHEMA, 'staged')).toHaveLength(10)
    await sink.close()
    // The driver was told to write no log: nothing left in the working directory.
    expect(existsSync('snowflake.log')).toBe(false)
  })

  it('two writes at once (concurrentWrites 2), each in a session of its own: both land once, none retried', async () => {
    const sink = openSink(server)
    expect(sink.concurrentWrites).toBe(2)
    await sink.prepare(schema('overlap'))
    for (const seqs of [
      [1, 2],
      [3, 4],
    ])
      expect(await Promise.all(seqs.map((seq) => sink.write(batchOf('overlap', seq, 'csv'))))).toEqual([
        { status: 'landed', rows: 5 },
        { status: 'landed', rows: 5 },
      ])
    expect(await server.rows(SCHEMA, 'overlap')).toHaveLength(20)
    expect(await sink.duplicates('overlap', ['id'])).toBe(0)
    await sink.close()
  })

  it('logs in with a key pair (the private key is a secret field)', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const keyed = await startFakeSnowflake({
      publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    })
    try {
      const sink = openSink(keyed, {
        password: undefined,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      })
      await sink.prepare(schema('keyed'))
      expect(await sink.write(batchOf('keyed', 1))).toEqual({ status: 'landed', rows: 5 })
      await sink.close()
    } finally {
      await keyed.stop()
    }
  })
})

describe('retries', () => {
  it('a commit whose response was lost: retried, the rows land once', async () => {
    const sink = openSink(server)
    await sink.prepare(schema('lost_commit'))
    server.dropResponseAfterCommit(/^COMMIT/)
    // The driver resends the request (same requestId) and gets the first answer: landed; or it
    // gives up and the sink answers retry.
    const first = await sink.write(batchOf('lost_commit', 1))
    expect(['retry', 'landed']).toContain(first.status)
    expect(await sink.write(batchOf('lost_commit', 1))).toEqual({ status: 'already-landed' })
    expect(await openSink(server).write(batchOf('lost_commit', 1))).toEqual({ status: 'already-landed' })
    expect(await server.rows(SCHEMA, 'lost_commit')).toHaveLength(5)
    expect(await sink.duplicates('lost_commit', ['id'])).toBe(0)
    await sink.close()
  })

  it('a session that expired between writes: the driver renews it and the write lands', async () => {
    const sink = openSink(server)
    await sink.prepare(schema('expired'))
    expect(await sink.write(batchOf('expired', 1))).toEqual({ status: 'landed', rows: 5 })
    server.expireSessions()
    const from = server.requests.length
    expect(await sink.write(batchOf('expired', 2))).toEqual({ status: 'landed', rows: 5 })
    expect(server.requests.slice(from)).toContain('/session/token-request')
    expect(await server.rows(SCHEMA, 'expired')).toHaveLength(10)
    await sink.close()
  })

  it('a fence row deleted by hand: the write is retried, and the retry makes it again and lands', async () => {
    const sink = openSink(server)
    await sink.prepare(schema('refenced'))
    expect(await sink.write(batchOf('refenced', 1))).toEqual({ status: 'landed', rows: 5 })
    await server.sql(
      `DELETE FROM "${server.database}"."${SCHEMA}"."_skippr_fences" WHERE pipeline = 'p_refenced'`,
    )
    expect((await sink.write(batchOf('refenced', 2))).status).toBe('retry')
    expect(await sink.write(batchOf('refenced', 2))).toEqual({ status: 'landed', rows: 5 })
    expect(await server.rows(SCHEMA, 'refenced')).toHaveLength(10)
    await sink.close()
  })

  it("a batch landed long ago (Snowflake's load history forgotten) is recognised by the ledger", async () => {
    const sink = openSink(server)
    await sink.prepare(schema('forgotten'))
    expect(await sink.write(batchOf('forgotten', 1))).toEqual({ status: 'landed', rows: 5 })
    server.forgetLoadHistory()
    expect(await openSink(server).write(batchOf('forgotten', 1))).toEqual({ status: 'already-landed' })
    expect(await server.rows(SCHEMA, 'forgotten')).toHaveLength(5)
    await sink.close()
  })
})

describe('check', () => {
  it('logs in and reads the warehouse, creating nothing; a wrong password fails it', async () => {
    const empty = await startFakeSnowflake()
    try {
      await openSink(empty).check()
      expect(empty.requests.filter((r) => /CREATE|INSERT/.test(r))).toEqual([])
      const error = await openSink(empty, { password: 'nope' })
        .check()
        .catch((e: Error) => e)
      expect((error as Error).message).toMatch(/Incorrect username or password/)
    } finally {
      await empty.stop()
    }
  })
})

describe('bad input: one clear line, classified', () => {
  it('wrong credentials: permanent, the password never shown', async () => {
    const sink = openSink(server, { password: 'not-the-password' })
    const error = await sink.prepare(schema('creds')).catch((e: Error) => e)
    expect(isPermanent(error)).toBe(true)
    expect((error as Error).message).toMatch(/username and password/)
    expect((error as Error).message).not.toContain('not-the-password')
    expect((error as Error).message).not.toContain('\n')
  })

  it('a missing warehouse: permanent, names it', async () => {
    const sink = openSink(server, { warehouse: 'NO_SUCH_WH' })
    const error = await sink.prepare(schema('nowh')).catch((e: Error) => e)
    expect(isPermanent(error)).toBe(true)
    expect((error as Error).message).toMatch(/warehouse NO_SUCH_WH: it does not exist/)
    expect((error as Error).message).not.toContain('\n')
  })

  it('a column of a type that cannot hold the field: permanent, naming column and type', async () => {
    await openSink(server).prepare(schema('setup'))
    await server.sql(
      `CREATE TABLE "${server.database}"."${SCHEMA}"."bin_col" (id DECIMAL(19,0), name VARCHAR, qty BLOB)`,
    )
    const error = await openSink(server)
      .prepare(schema('bin_col'))
      .catch((e: Error) => e)
    expect(isPermanent(error)).toBe(true)
    expect((error as Error).message).toMatch(/column qty is BINARY, which cannot hold field qty \(int/)
  })

  it('the service unreachable: a write is retried, not fatal', async () => {
    const gone = await startFakeSnowflake()
    const sink = openSink(gone)
    await sink.prepare(schema('unreachable'))
    await gone.stop()
    const outcome = await sink.write(batchOf('unreachable', 1))
    expect(outcome.status).toBe('retry')
    await sink.close()
  }, 120_000)
})
