/**
 * `--log debug` through the built CLI: what an operator follows a batch by — committed (pipeline,
 * batch key, rows, bytes), landed (batch key, rows, duration, sink) — and each retry (attempt,
 * delay, reason). `--log info` leaves them out.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { postgresSink } from './support/file-sync.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const ROWS = 30_000
/** Rows enough for a run to outlast a few lease heartbeats. */
const RENEWAL_ROWS = 600_000
const BATCH_KEY = /^bikehire\/[0-9a-f]{16}\/\d{12}$/

interface LogLine {
  readonly level: number
  readonly msg: string
  readonly [field: string]: unknown
}

/** The JSON log lines of stderr (a failure's `[skippr] …` line is not one). */
const logLines = (stderr: string): LogLine[] =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: ROWS }))
})
afterEach(async () => {
  await p.remove()
})

const sync = (level: string, env: Record<string, string> = {}) =>
  runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text', '--log', level], {
    cwd: p.dir,
    env: { BUFFER_THRESHOLD_BYTES: '500000', ...env },
  })

it('debug: each batch committed and landed, by its key, and each lease renewal', {
  timeout: 60_000,
}, async () => {
  // A heartbeat every 400 ms (a TTL of 1.2 s), over a run of a few seconds.
  await p.write('skippr.yml', bikehireConfig({ rows: RENEWAL_ROWS }))
  const result = await sync('debug', { SKIPPR_LEASE_TTL_SECONDS: '1.2' })
  expect(result.code).toBe(0)
  const logs = logLines(result.stderr)
  const committed = logs.filter((l) => l.msg === 'batch committed')
  const landed = logs.filter((l) => l.msg === 'batch landed')
  expect(committed.length).toBeGreaterThan(1)
  for (const line of committed) {
    expect(line).toMatchObject({ level: 20, pipeline: 'bikehire', batch: expect.stringMatching(BATCH_KEY) })
    expect(line.bytes).toBeGreaterThan(0)
  }
  for (const line of landed)
    expect(line).toMatchObject({
      level: 20,
      batch: expect.stringMatching(BATCH_KEY),
      duration_ms: expect.any(Number),
      sink: 'warehouse',
      sink_type: 'Duckdb',
    })
  const renewals = logs.filter((l) => l.msg === 'writer lease renewed')
  expect(renewals.length).toBeGreaterThan(0)
  for (const line of renewals) expect(line).toMatchObject({ level: 20, pipeline: 'bikehire', fence: '1' })
  const rowsBy = (lines: LogLine[]) => new Map(lines.map((l) => [l.batch, l.rows]))
  expect(rowsBy(landed)).toEqual(rowsBy(committed))
  expect([...rowsBy(committed).values()].reduce((sum: number, rows) => sum + Number(rows), 0)).toBe(
    RENEWAL_ROWS,
  )

  const info = await sync('info', { SKIPPR_LEASE_WAIT_SECONDS: '0' })
  expect(info.code).toBe(0)
  expect(logLines(info.stderr).filter((l) => l.level < 30)).toEqual([])
})

it('each retry: attempt, delay and reason', { timeout: 60_000 }, async () => {
  await p.write('skippr.yml', bikehireConfig({ rows: ROWS, sink: postgresSink('public') }))
  const result = await sync('debug', {
    WAREHOUSE_URL: 'postgres://postgres@127.0.0.1:1/test',
    SKIPPR_RETRY_BUDGET_SECONDS: '1',
  })
  expect(result.code).toBe(1)
  const retries = logLines(result.stderr).filter((l) => l.msg === 'batch did not land; retrying')
  // Batches may be written side by side: each counts its own attempts.
  const first = retries.filter((l) => l.batch === retries[0]?.batch)
  expect(first.map((l) => l.attempt).slice(0, 2)).toEqual([1, 2])
  for (const line of retries)
    expect(line).toMatchObject({
      batch: expect.stringMatching(BATCH_KEY),
      delay_ms: expect.any(Number),
      reason: expect.stringContaining('ECONNREFUSED'),
    })
})
