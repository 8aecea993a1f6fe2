/**
 * The cloud warehouses through the CLI, each sink talking through its official SDK to the fake of
 * `@skippr/test-servers` (no BigQuery or Snowflake is reachable here), started in this process with
 * its rows in a DuckDB file of the project: a File source CSV of awkward values (the extremes of a
 * 64-bit integer, unicode, the empty string beside NULL, doubles at their limits, microseconds)
 * lands value for value, a second sync adds nothing, and bad input gets one clear line: for good,
 * fast, when no retry can fix it (wrong credentials, a missing dataset or warehouse), as "retry
 * later" when the endpoint is unreachable; never a secret.
 */
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { startFakeBigquery, startFakeSnowflake } from '@skippr/test-servers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type CliResult, runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'
import { failure } from './support/sink-sync.js'

/** The file's rows as [id, big, note, score, seen_at in UTC to the microsecond]: null is an unquoted empty field. */
const ROWS: [number, string | null, string | null, number | null, string | null][] = [
  [1, '9223372036854775807', 'Zürich ☃ 𝄞 東京', 1.5, '2024-02-29T23:59:59.123456Z'],
  [2, '-9223372036854775808', '', -0.25, '1970-01-01T00:00:00.000000Z'],
  [3, '9007199254740993', null, 1e308, null],
  [4, '0', 'a "quoted", comma', 5e-324, '2038-01-19T03:14:08.000000Z'],
  [5, null, 'two\nlines', 0.1, '1969-12-31T23:59:59.999999Z'],
]

const CSV = [
  'id,big,note,score,seen_at',
  '1,9223372036854775807,Zürich ☃ 𝄞 東京,1.5,2024-02-29T23:59:59.123456Z',
  '2,-9223372036854775808,"",-0.25,1970-01-01T00:00:00Z',
  '3,9007199254740993,,1e308,',
  '4,0,"a ""quoted"", comma",5e-324,2038-01-19T03:14:08Z',
  '5,,"two\nlines",0.1,1969-12-31T23:59:59.999999Z',
  '',
].join('\n')

const SCHEMA =
  '[{ name: id, type: long }, { name: big, type: long }, { name: note, type: string }, { name: score, type: double }, { name: seen_at, type: timestamp }]'

/** A permanent failure is told at once; a run that retried would take the ten-minute budget. */
const PERMANENT_MS = 30_000

let p: Project
beforeEach(async () => {
  p = await project()
  await p.write('awkward.csv', CSV)
})
afterEach(async () => {
  await p.remove()
})

/** `sync --once` of awkward.csv into `sink` (a data_sinks entry in YAML flow style). */
async function syncInto(sink: string, env: Record<string, string>): Promise<CliResult & { ms: number }> {
  await p.write(
    'skippr.yml',
    [
      `data_sources: { awkward: { File: { path: awkward.csv, format: csv, settle_seconds: 0, schema: ${SCHEMA} } } }`,
      `data_sinks: { warehouse: { ${sink} } }`,
      'pipelines: { awkward: { data_source: data_sources.awkward, data_sink: data_sinks.warehouse } }',
      '',
    ].join('\n'),
  )
  const started = performance.now()
  const run = await runCli(['sync', '--pipeline', 'awkward', '--once', '--output', 'text'], {
    cwd: p.dir,
    env: { SKIPPR_RETRY_BUDGET_SECONDS: '600', ...env },
  })
  return { ...run, ms: performance.now() - started }
}

/** Two syncs land the file once; then the fake is stopped and its DuckDB file read, every value as text. */
async function landsExactly(
  sink: string,
  env: Record<string, string>,
  stop: () => Promise<void>,
  file: string,
  table: string,
): Promise<void> {
  for (const expectedRows of [ROWS.length, 0]) {
    const run = await syncInto(sink, env)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(`rows=${expectedRows} `)
  }
  await stop()
  const instance = await DuckDBInstance.create(file)
  try {
    const connection = await instance.connect()
    const landed = await connection.runAndReadAll(
      `SELECT CAST(id AS INTEGER) AS id, CAST(big AS VARCHAR) AS big, note, score,
         strftime(seen_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ') AS seen_at
       FROM ${table} ORDER BY id`,
    )
    expect(landed.getRowsJS()).toEqual(ROWS)
    connection.closeSync()
  } finally {
    instance.closeSync()
  }
}

/** Exit 1 within PERMANENT_MS, one line holding `reason`, no "retry later", no secret. */
function expectPermanent(run: CliResult & { ms: number }, reason: RegExp, secrets: string[]): void {
  expect(run.code).toBe(1)
  expect(run.ms).toBeLessThan(PERMANENT_MS)
  expect(failure(run.stderr)).toMatchObject({ lines: 1, last: expect.stringMatching(reason) })
  expect(run.stderr).not.toMatch(/retry later/)
  for (const secret of secrets) expect(`${run.stdout}${run.stderr}`).not.toContain(secret)
}

/**
 * Exit 1 once the two-second budget is spent, and soon after it: one line, "retry later", naming the
 * endpoint, no secret. The bound is no speed test: the budget plus a CLI start and one short attempt
 * take about 3 s here, while an SDK that retries on its own first takes 10 to 35 s (its backoff), so
 * the bound, generous for a loaded machine, checks that skipprd's budget, not the SDK's, decides.
 */
function expectTransient(run: CliResult & { ms: number }, endpoint: string, secret: string): void {
  expect(run.code).toBe(1)
  expect(run.ms).toBeLessThan(BUDGET_HONOURED_MS)
  expect(failure(run.stderr)).toMatchObject({ lines: 1, last: expect.stringMatching(/retry later/) })
  expect(run.stderr).toContain(endpoint)
  expect(`${run.stdout}${run.stderr}`).not.toContain(secret)
}

/** An endpoint nothing listens on. */
const UNREACHABLE = 'http://127.0.0.1:1'
/** A run against UNREACHABLE with a two-second budget ends within this (see expectTransient). */
const BUDGET_HONOURED_MS = 15_000
/** Room for the SDK's own retries, so a run that ignores the budget fails the bound, not the timeout. */
const UNREACHABLE_TIMEOUT_MS = 120_000

describe('Bigquery', () => {
  const dataset = 'skippr_cli'
  const entry = (endpoint: string, extra = '') =>
    `Bigquery: { project: skippr-test, dataset: ${dataset}, access_token: "\${BQ_TOKEN}", api_endpoint: "${endpoint}"${extra} }`

  it('lands every value of the CSV exactly; a second sync adds nothing', async () => {
    const file = path.join(p.dir, 'bigquery.duckdb')
    const server = await startFakeBigquery({ path: file })
    await landsExactly(
      entry(server.endpoint),
      { BQ_TOKEN: server.token },
      () => server.stop(),
      file,
      `"${dataset}"."awkward"`,
    )
  })

  it('a wrong access token: exit 1 at once, one line, never the token', async () => {
    const server = await startFakeBigquery()
    try {
      const wrong = 'wrong-token-5147'
      const run = await syncInto(entry(server.endpoint), { BQ_TOKEN: wrong })
      expectPermanent(run, /check credentials or access_token/, [wrong, server.token])
    } finally {
      await server.stop()
    }
  })

  it('a missing dataset with create_dataset: false: exit 1 at once, one line naming it', async () => {
    const server = await startFakeBigquery()
    try {
      const run = await syncInto(entry(server.endpoint, ', create_dataset: false'), {
        BQ_TOKEN: server.token,
      })
      expectPermanent(run, new RegExp(dataset), [server.token])
    } finally {
      await server.stop()
    }
  })

  it(
    'an unreachable endpoint: retried until the budget is spent, then "retry later"',
    async () => {
      const token = 'unsent-token-2290'
      const run = await syncInto(entry(UNREACHABLE), { BQ_TOKEN: token, SKIPPR_RETRY_BUDGET_SECONDS: '2' })
      expectTransient(run, '127.0.0.1:1', token)
    },
    UNREACHABLE_TIMEOUT_MS,
  )
})

describe('Snowflake', () => {
  const entry = (accessUrl: string, warehouse = 'SKIPPR_WH') =>
    `Snowflake: { account: skippr_test, username: skippr, password: "\${SF_PASSWORD}", warehouse: ${warehouse}, database: SKIPPR_TEST, access_url: "${accessUrl}" }`

  it('lands every value of the CSV exactly; a second sync adds nothing', async () => {
    const file = path.join(p.dir, 'snowflake.duckdb')
    const server = await startFakeSnowflake({ path: file })
    await landsExactly(
      entry(server.accessUrl),
      { SF_PASSWORD: server.password },
      () => server.stop(),
      file,
      '"PUBLIC"."awkward"',
    )
  })

  it('a wrong password: exit 1 at once (390100), one line, never the password', async () => {
    const server = await startFakeSnowflake()
    try {
      const wrong = 'wrong-password-8812'
      const run = await syncInto(entry(server.accessUrl), { SF_PASSWORD: wrong })
      expectPermanent(run, /check username and password or private_key/, [wrong, server.password])
    } finally {
      await server.stop()
    }
  })

  it('a missing warehouse: exit 1 at once, one line naming the setting', async () => {
    const server = await startFakeSnowflake()
    try {
      const run = await syncInto(entry(server.accessUrl, 'NO_SUCH_WH'), { SF_PASSWORD: server.password })
      expectPermanent(run, /check warehouse/, [server.password])
    } finally {
      await server.stop()
    }
  })

  it(
    'an unreachable endpoint: retried until the budget is spent, then "retry later"',
    async () => {
      const secret = 'unsent-password-6604'
      const run = await syncInto(entry(UNREACHABLE), {
        SF_PASSWORD: secret,
        SKIPPR_RETRY_BUDGET_SECONDS: '2',
      })
      expectTransient(run, '127.0.0.1:1', secret)
    },
    UNREACHABLE_TIMEOUT_MS,
  )
})
