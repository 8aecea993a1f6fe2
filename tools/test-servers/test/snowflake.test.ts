import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { countsSince } from '../src/request-counts.js'
import { type FakeSnowflake, startFakeSnowflake } from '../src/snowflake.js'

let server: FakeSnowflake
let token: string

interface Answer {
  success: boolean
  code?: string
  data: { rowset?: (string | null)[][]; stageInfo?: { location: string } } & Record<string, unknown>
}

async function post(path: string, body: unknown, auth = token, to = server): Promise<Answer> {
  const response = await fetch(`${to.accessUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Snowflake Token="${auth}"` },
    body: JSON.stringify(body),
  })
  return (await response.json()) as Answer
}

const query = (sqlText: string, requestId: string = crypto.randomUUID()) =>
  post(`/queries/v1/query-request?requestId=${requestId}`, { sqlText })

/** A session token of `to`, logged in with its warehouse. */
async function login(to: FakeSnowflake): Promise<string> {
  const answer = await post(
    `/session/v1/login-request?warehouse=${to.warehouse}`,
    { data: { ACCOUNT_NAME: to.account, LOGIN_NAME: to.username, PASSWORD: to.password } },
    '',
    to,
  )
  return String(answer.data.token)
}

beforeAll(async () => {
  server = await startFakeSnowflake()
  token = await login(server)
})
afterAll(async () => server.stop())

it('refuses a wrong password with 390100', async () => {
  const login = await post('/session/v1/login-request', {
    data: { ACCOUNT_NAME: server.account, LOGIN_NAME: server.username, PASSWORD: 'wrong' },
  })
  expect(login).toMatchObject({ success: false, code: '390100' })
})

it('answers a resent requestId with the first answer, without running it again', async () => {
  await query('CREATE TABLE PUBLIC."once" (n NUMBER(10,0))')
  const requestId = crypto.randomUUID()
  const first = await query('INSERT INTO PUBLIC."once" VALUES (1)', requestId)
  const again = await query('INSERT INTO PUBLIC."once" VALUES (1)', requestId)
  expect(again).toEqual(first)
  expect(await server.rows('PUBLIC', 'once')).toEqual([{ n: 1n }])
})

it('skips a staged file already loaded into the table (COPY load metadata), until it is forgotten', async () => {
  await query('CREATE TABLE PUBLIC."loads" (id NUMBER(19,0), doc VARIANT)')
  const put = await query('PUT \'file:///unused/a.json.gz\' @%"loads"/p/')
  expect(put.data.stageInfo).toMatchObject({ locationType: 'LOCAL_FS' })
  writeFileSync(
    join(String(put.data.stageInfo?.location), 'a.json.gz'),
    gzipSync('{"ID":1,"doc":{"x":[1]}}\n'),
  )
  const copy = `COPY INTO PUBLIC."loads" FROM @%"loads"/p/a.json.gz FILE_FORMAT = (TYPE = JSON) MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE`
  expect((await query(copy)).data.rowset?.[0]?.slice(0, 4)).toEqual(['p/a.json.gz', 'LOADED', '1', '1'])
  expect((await query(copy)).data.rowset).toEqual([['Copy executed with 0 files processed.']])
  server.forgetLoadHistory()
  expect((await query(copy)).data.rowset?.[0]?.[1]).toBe('LOADED')
  expect(await server.rows('PUBLIC', 'loads')).toEqual([
    { id: 1n, doc: '{"x":[1]}' },
    { id: 1n, doc: '{"x":[1]}' },
  ])
})

it('rolls back a quiet transaction that blocks a write, after detachedTransactionMs (a client gone)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skippr-fake-snowflake-test-'))
  try {
    const file = join(dir, 'db.duckdb')
    const own = await startFakeSnowflake({ path: file, detachedTransactionMs: 300 })
    try {
      const [gone, next] = [await login(own), await login(own)]
      const run = (auth: string, sqlText: string) =>
        post(`/queries/v1/query-request?requestId=${crypto.randomUUID()}`, { sqlText }, auth, own)
      await run(next, 'CREATE TABLE PUBLIC."fence" (n NUMBER(10,0))')
      await run(next, 'INSERT INTO PUBLIC."fence" VALUES (0)')
      await run(gone, 'BEGIN')
      expect(await run(gone, 'UPDATE PUBLIC."fence" SET n = 1')).toMatchObject({ success: true })
      // The client of `gone` never commits: the next write waits for its transaction, then it is rolled back.
      const started = performance.now()
      expect(await run(next, 'UPDATE PUBLIC."fence" SET n = n + 10')).toMatchObject({ success: true })
      expect(performance.now() - started).toBeGreaterThanOrEqual(300)
      expect(await own.rows('PUBLIC', 'fence')).toEqual([{ n: 10n }])
    } finally {
      await own.stop()
    }
    // The rows stay in the file after stop().
    const { DuckDBInstance } = await import('@duckdb/node-api')
    const instance = await DuckDBInstance.create(file)
    const connection = await instance.connect()
    expect((await connection.runAndReadAll('SELECT n FROM "PUBLIC"."fence"')).getRowObjectsJS()).toEqual([
      { n: 10 },
    ])
    connection.closeSync()
    instance.closeSync()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

it('names transactions, lists them (SHOW TRANSACTIONS), and aborts a transaction or a session', async () => {
  const own = await startFakeSnowflake()
  try {
    const [a, b, c] = [await login(own), await login(own), await login(own)]
    const run = async (auth: string, sqlText: string) =>
      post(`/queries/v1/query-request?requestId=${crypto.randomUUID()}`, { sqlText }, auth, own)
    await run(a, 'CREATE TABLE PUBLIC."t" (n NUMBER(10,0))')
    await run(a, 'BEGIN NAME FIRST_TX')
    await run(a, 'INSERT INTO PUBLIC."t" VALUES (1)')
    await run(b, 'BEGIN TRANSACTION')
    const listed = (await run(c, 'SHOW TRANSACTIONS')).data.rowset ?? []
    expect(listed.map((r) => [r[3], r[5], r[6]])).toEqual([
      ['FIRST_TX', 'running', '0'],
      [expect.stringMatching(/^[0-9a-f-]{36}$/), 'running', '0'],
    ])
    const [first, second] = listed as string[][]
    const sessionOf = async (auth: string) =>
      (await run(auth, 'SELECT CURRENT_SESSION()')).data.rowset?.[0]?.[0]
    expect(await sessionOf(a)).toBe(first?.[2])
    // Aborting a's transaction rolls its row back; a's session goes on, outside a transaction.
    await run(c, `SELECT SYSTEM$ABORT_TRANSACTION(${first?.[0]})`)
    expect(await own.rows('PUBLIC', 't')).toEqual([])
    expect(await run(a, 'SELECT 1')).toMatchObject({ success: true })
    // Aborting b's session ends it: its token is unknown from then on, its transaction gone.
    await run(c, `SELECT SYSTEM$ABORT_SESSION(${second?.[2]})`)
    expect(await run(b, 'SELECT 1')).toMatchObject({ success: false, code: '390111' })
    expect((await run(c, 'SHOW TRANSACTIONS')).data.rowset).toEqual([])
  } finally {
    await own.stop()
  }
})

it('counts requests by kind, copies what a COPY loads to captureLoads, and PURGE removes the loaded file', async () => {
  const captured = mkdtempSync(join(tmpdir(), 'skippr-capture-'))
  try {
    await query('CREATE TABLE PUBLIC."purged" (id NUMBER(19,0))')
    const put = await query('PUT \'file:///unused/b.json.gz\' @%"purged"/p/')
    const body = gzipSync('{"ID":1}\n')
    writeFileSync(join(String(put.data.stageInfo?.location), 'b.json.gz'), body)
    const before = server.requestCounts()
    server.captureLoads(captured)
    await query(
      'COPY INTO PUBLIC."purged" FROM @%"purged"/p/b.json.gz FILE_FORMAT = (TYPE = JSON) MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE PURGE = TRUE',
    )
    server.captureLoads(undefined)
    expect(countsSince(before, server.requestCounts())).toEqual({ 'query COPY': 1 })
    expect(readdirSync(captured)).toEqual(['000000-b.json.gz'])
    expect(readFileSync(join(captured, '000000-b.json.gz'))).toEqual(body)
    expect(server.stagedFiles().filter((file) => file.endsWith('b.json.gz'))).toEqual([])
    expect(await server.rows('PUBLIC', 'purged')).toEqual([{ id: 1n }])
  } finally {
    rmSync(captured, { recursive: true, force: true })
  }
})
