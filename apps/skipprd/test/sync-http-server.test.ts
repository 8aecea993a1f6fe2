/**
 * `skipprd sync` with an HttpServer source end to end, through the real CLI: every request answered
 * 200 holds rows that land exactly once, whenever skipprd is SIGKILLed. SKIPPR_HTTP_KILLS=50 runs the
 * kill tests at full size by hand (CI: 5 kills each).
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePorts } from '@skippr/test-servers'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { exited, runCli } from './support/cli.js'
import { query } from './support/duckdb.js'
import {
  httpPushConfig,
  type PushRun,
  postUntilCommitted,
  sendWithKills,
  startSync,
  stopSync,
} from './support/http-push.js'
import { type Project, project } from './support/project.js'

const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const KILLS = Number(process.env.SKIPPR_HTTP_KILLS ?? 5)
const RECORDS = KILLS * 400
const TOKEN = `t-${randomBytes(6).toString('hex')}`

const admin = new pg.Pool({ connectionString: PG_URL, max: 2 })
const cleanups: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  await admin.query('SELECT 1')
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(async () => {
  await admin.end()
})

async function pushProject(sink: string, source = ''): Promise<{ p: Project; run: PushRun }> {
  const [port] = (await freePorts(1)) as [number]
  const p = await project(httpPushConfig(port, sink, source))
  cleanups.push(() => p.remove())
  return { p, run: { cwd: p.dir, pipeline: 'push', port, env: { HTTP_TOKEN: TOKEN, WAREHOUSE_URL: PG_URL } } }
}

async function pgProject(source = '') {
  const schema = `skippr_http_${randomBytes(5).toString('hex')}`
  cleanups.push(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
  const made = await pushProject(
    `Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} }`,
    source,
  )
  const counts = async () => {
    const { rows } = await admin
      .query(`SELECT count(*)::int AS rows, count(DISTINCT n)::int AS uniq FROM "${schema}".events`)
      .catch(() => ({ rows: [{ rows: 0, uniq: 0 }] }))
    return { rows: rows[0].rows as number, unique: rows[0].uniq as number }
  }
  return { ...made, counts, schema }
}

/** Polls until `counts` reaches `records` rows or the deadline passes; the last counts. */
async function landed(
  counts: () => Promise<{ rows: number; unique: number }>,
  records: number,
  deadline: number,
) {
  for (;;) {
    const seen = await counts()
    if (seen.rows >= records || Date.now() > deadline) return seen
    await sleep(250)
  }
}

describe('HttpServer into PostgreSQL', () => {
  it(`lands every acknowledged record exactly once across ${KILLS} SIGKILLs`, async () => {
    const { run, counts } = await pgProject()
    const deadline = Date.now() + 60_000 + KILLS * 12_000
    const sync = await sendWithKills(run, { records: RECORDS, perRequest: 20, kills: KILLS, deadline })
    cleanups.push(() => stopSync(sync))
    // The batches committed before the last restart land after it: wait for them, then compare.
    expect(await landed(counts, RECORDS, Date.now() + 180_000)).toEqual({ rows: RECORDS, unique: RECORDS })
  }, 600_000)

  it('keeps the rows of a request answered 200 when killed right after the answer', async () => {
    const { run, counts } = await pgProject()
    const deadline = Date.now() + 90_000
    for (let round = 0; round < 3; round++) {
      const sync = startSync(run)
      await postUntilCommitted(run.port, `once-${round}`, `{"n":${round}}\n`, deadline)
      sync.kill('SIGKILL')
      await exited(sync)
    }
    const sync = startSync(run)
    cleanups.push(() => stopSync(sync))
    expect(await landed(counts, 3, deadline)).toEqual({ rows: 3, unique: 3 })
  }, 120_000)

  it('answers bad input once, clearly, and loses nothing committed', async () => {
    const { run, counts, schema } = await pgProject(`, token: \${HTTP_TOKEN}, max_request_bytes: 1000`)
    const sync = startSync(run)
    cleanups.push(() => stopSync(sync))
    const url = `http://127.0.0.1:${run.port}/`
    const auth = { authorization: `Bearer ${TOKEN}` }
    const deadline = Date.now() + 60_000
    // The first good request, retried until the server listens.
    for (;;) {
      const answer = await fetch(url, { method: 'POST', headers: auth, body: '{"n":1}\n' }).catch(
        () => undefined,
      )
      if (answer?.status === 200) break
      if (Date.now() > deadline) throw new Error('the HttpServer source never answered')
      await sleep(200)
    }
    const post = async (body: string, headers: Record<string, string> = auth) => {
      const answer = await fetch(url, { method: 'POST', headers, body })
      return { status: answer.status, body: await answer.text() }
    }
    expect(await post('{"n":2}\n{"n":\n')).toEqual({
      status: 400,
      body: '{"error":"line 2: Unexpected end of JSON input"}\n',
    })
    expect((await post(`{"n":3,"pad":"${'x'.repeat(2000)}"}\n`)).status).toBe(413)
    const wrong = await post('{"n":4}\n', { authorization: 'Bearer nope' })
    expect(wrong.status).toBe(401)
    expect(wrong.body).not.toContain(TOKEN)
    expect((await post('{"n":5}\n', {})).status).toBe(401)
    expect((await post('{"n":6}\n')).status).toBe(200)
    expect(await landed(counts, 2, Date.now() + 60_000)).toEqual({ rows: 2, unique: 2 })
    const { rows } = await admin.query(`SELECT n FROM "${schema}".events ORDER BY n`)
    expect(rows.map((r) => r.n)).toEqual([1, 6])
  }, 120_000)

  it('refuses sync --once in one line', async () => {
    const { run } = await pgProject()
    const result = await runCli(['sync', '--pipeline', 'push', '--once', '--output', 'text'], {
      cwd: run.cwd,
      env: run.env,
      timeoutMs: 60_000,
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(/HttpServer.*without --once/)
  }, 90_000)
})

describe('HttpServer into DuckDB', () => {
  it(`lands every acknowledged record exactly once across ${KILLS} SIGKILLs`, async () => {
    const { p, run } = await pushProject('Duckdb: { path: ./warehouse.duckdb }')
    const deadline = Date.now() + 60_000 + KILLS * 12_000
    await stopSync(await sendWithKills(run, { records: RECORDS, perRequest: 20, kills: KILLS, deadline }))
    // DuckDB is read between runs (one process opens the file for writing): run until all landed.
    const file = path.join(p.dir, 'warehouse.duckdb')
    const counts = async () => {
      const [row] = await query(
        file,
        'SELECT count(*) AS rows, count(DISTINCT n) AS uniq FROM main.events',
      ).catch(() => [{ rows: 0, uniq: 0 }])
      return { rows: Number(row?.rows), unique: Number(row?.uniq) }
    }
    const until = Date.now() + 180_000
    let seen = await counts()
    while (seen.rows < RECORDS && Date.now() < until) {
      const sync = startSync(run)
      await sleep(5_000)
      await stopSync(sync)
      seen = await counts()
    }
    expect(seen).toEqual({ rows: RECORDS, unique: RECORDS })
  }, 600_000)
})
