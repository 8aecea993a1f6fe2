import { makeBatch, trickyRows } from '@skippr/conformance'
import { isPermanent, type NamespaceSchema } from '@skippr/connector-api'
import { countsSince, type FakeBigquery } from '@skippr/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATASET, openSink, startFakeBigquery } from './fake.js'

const schema = (namespace: string): NamespaceSchema => ({
  namespace,
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'long' },
    { name: 'name', type: 'string' },
    { name: 'qty', type: 'int' },
  ],
})
const batchOf = (namespace: string, seq: number, fence = 1) =>
  makeBatch({
    pipeline: `p_${namespace}`,
    seq,
    fence,
    parts: [{ schema: schema(namespace), format: 'jsonl', rows: trickyRows(seq * 100) }],
  })

let server: FakeBigquery

beforeAll(async () => {
  server = await startFakeBigquery()
})
afterAll(async () => server.stop())

describe('landing', () => {
  it('a batch costs an upload and one query: the transaction, the staging drop and the ledger read in one script', async () => {
    const sink = openSink(server)
    await sink.prepare(schema('trips'))
    expect(await sink.write(batchOf('trips', 1))).toEqual({ status: 'landed', rows: 5 })
    const before = server.requestCounts()
    expect(await sink.write(batchOf('trips', 2))).toEqual({ status: 'landed', rows: 5 })
    // The load job answered DONE: no poll; no ledger read before it, no drop after it.
    expect(countsSince(before, server.requestCounts())).toEqual({ upload: 1, 'jobs.query': 1 })
    expect(await server.rows(DATASET, 'trips')).toHaveLength(10)
    // The staging tables are gone (the script dropped them): listed through DuckDB's catalog.
    await server.sql(
      `CREATE TABLE ${DATASET}.staging_left AS SELECT table_name FROM duckdb_tables() ` +
        `WHERE schema_name = '${DATASET}' AND starts_with(table_name, '_skippr_stage_')`,
    )
    expect(await server.rows(DATASET, 'staging_left')).toEqual([])
  })
})

describe('retries', () => {
  it('a load whose response was lost: the retry finds the job (409) and the rows land once', async () => {
    const sink = openSink(server)
    await sink.prepare(schema('lost_load'))
    server.dropResponseAfterCommit(/^POST \/upload\//)
    const first = await sink.write(batchOf('lost_load', 1))
    expect(first.status).toBe('retry')
    const from = server.requests.length
    expect(await sink.write(batchOf('lost_load', 1))).toEqual({ status: 'landed', rows: 5 })
    // The second upload met the job of the first: BigQuery answered 409 and the sink read the job.
    expect(
      server.requests.slice(from).filter((r) => r.startsWith('GET /bigquery/v2/projects/skippr-test/jobs/')),
    ).not.toEqual([])
    expect(await server.rows(DATASET, 'lost_load')).toHaveLength(5)
    expect(await sink.count('lost_load')).toBe(5)
    expect(await sink.duplicates('lost_load', ['id'])).toBe(0)
  })

  it('a commit whose response was lost, retried after BigQuery forgot the job ids: the ledger says already-landed', async () => {
    const sink = openSink(server)
    await sink.prepare(schema('lost_commit'))
    server.dropResponseAfterCommit(/BEGIN TRANSACTION/)
    // The SDK may retry the query itself and find its job: landed; else the sink answers retry.
    expect(['retry', 'landed']).toContain((await sink.write(batchOf('lost_commit', 1))).status)
    server.forgetJobs()
    expect(await sink.write(batchOf('lost_commit', 1))).toEqual({ status: 'already-landed' })
    expect(await server.rows(DATASET, 'lost_commit')).toHaveLength(5)
  })

  it('a batch landed long ago (its job ids forgotten) is recognised by the ledger', async () => {
    const sink = openSink(server)
    await sink.prepare(schema('forgotten'))
    expect(await sink.write(batchOf('forgotten', 1))).toEqual({ status: 'landed', rows: 5 })
    server.forgetJobs()
    expect(await openSink(server).write(batchOf('forgotten', 1))).toEqual({ status: 'already-landed' })
    expect(await server.rows(DATASET, 'forgotten')).toHaveLength(5)
  })
})

describe('bad input: one clear line, classified', () => {
  it('wrong credentials: permanent, the token never shown', async () => {
    const sink = openSink(server, { access_token: 'not-the-token' })
    const error = await sink.prepare(schema('creds')).catch((e: Error) => e)
    expect(isPermanent(error)).toBe(true)
    expect((error as Error).message).toMatch(/credentials/)
    expect((error as Error).message).not.toContain('not-the-token')
    expect((error as Error).message).not.toContain('\n')
  })

  it('a missing dataset with create_dataset false: permanent, says how to fix it', async () => {
    const sink = openSink(server, { dataset: 'no_such_dataset', create_dataset: false })
    const error = await sink.prepare(schema('nodataset')).catch((e: Error) => e)
    expect(isPermanent(error)).toBe(true)
    expect((error as Error).message).toMatch(/no_such_dataset does not exist and create_dataset is false/)
    expect(await server.hasTable('no_such_dataset', 'nodataset')).toBe(false)
  })

  it('a column of a type that cannot hold the field: permanent, naming column and type', async () => {
    await openSink(server).prepare(schema('setup'))
    await server.sql(`CREATE TABLE ${DATASET}.bytes_col (id BIGINT, name VARCHAR, qty BLOB)`)
    const error = await openSink(server)
      .prepare(schema('bytes_col'))
      .catch((e: Error) => e)
    expect(isPermanent(error)).toBe(true)
    expect((error as Error).message).toMatch(/column qty is BYTES, which cannot hold field qty \(int/)
  })

  it('the service unreachable: a write is retried, not fatal', async () => {
    const gone = await startFakeBigquery()
    const sink = openSink(gone)
    await sink.prepare(schema('unreachable'))
    await gone.stop()
    const outcome = await sink.write(batchOf('unreachable', 1))
    expect(outcome.status).toBe('retry')
  })
})
