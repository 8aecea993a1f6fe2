import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type FakeSnowflake, startFakeSnowflake } from '../src/snowflake.js'

let server: FakeSnowflake
let token: string

interface Answer {
  success: boolean
  code?: string
  data: { rowset?: (string | null)[][]; stageInfo?: { location: string } } & Record<string, unknown>
}

async function post(path: string, body: unknown, auth = token): Promise<Answer> {
  const response = await fetch(`${server.accessUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Snowflake Token="${auth}"` },
    body: JSON.stringify(body),
  })
  return (await response.json()) as Answer
}

const query = (sqlText: string, requestId: string = crypto.randomUUID()) =>
  post(`/queries/v1/query-request?requestId=${requestId}`, { sqlText })

beforeAll(async () => {
  server = await startFakeSnowflake()
  const login = await post(`/session/v1/login-request?warehouse=${server.warehouse}`, {
    data: { ACCOUNT_NAME: server.account, LOGIN_NAME: server.username, PASSWORD: server.password },
  })
  token = String(login.data.token)
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
