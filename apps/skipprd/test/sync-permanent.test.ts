/**
 * A destination refusal no retry can fix, met while opening or preparing the sink, ends
 * `sync --once` at once with exit 1 and the destination's reason: the retry budget is set to ten
 * minutes here, so a run that retried would be killed by the test's one-minute timeout instead.
 */
import { randomBytes } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'

const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

let p: Project

beforeEach(async () => {
  p = await project()
  await p.write('events.csv', 'id,Name,name\n1,a,b\n')
})
afterEach(async () => {
  await p.remove()
})

async function syncInto(sink: string, env: Record<string, string> = {}) {
  await p.write(
    'skippr.yml',
    [
      'data_sources: { events: { File: { path: events.csv, format: csv } } }',
      `data_sinks: { warehouse: { ${sink} } }`,
      'pipelines: { events: { data_source: data_sources.events, data_sink: data_sinks.warehouse } }',
      '',
    ].join('\n'),
  )
  return runCli(['sync', '--pipeline', 'events', '--once', '--output', 'text'], {
    cwd: p.dir,
    env: { SKIPPR_RETRY_BUDGET_SECONDS: '600', ...env },
  })
}

describe('a permanent refusal while preparing the destination', () => {
  it('PostgreSQL: a database that does not exist (3D000) fails the run at once', async () => {
    const missing = new URL(PG_URL)
    missing.pathname = `/skippr_missing_${randomBytes(4).toString('hex')}`
    const run = await syncInto(`Postgres: { connection_string: \${WAREHOUSE_URL} }`, {
      WAREHOUSE_URL: missing.toString(),
    })
    expect(run.signal).toBeNull()
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/does not exist/)
    expect(run.stderr).not.toMatch(/retry later/)
  })

  it('DuckDB: columns whose names differ only in case (Name, name) fail the run at once', async () => {
    const run = await syncInto('Duckdb: { path: ./warehouse.duckdb }')
    expect(run.signal).toBeNull()
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/cannot create or evolve table "main"\."events" in DuckDB/)
  })
})

describe('a permanent refusal while writing', () => {
  it('DuckDB: a batch that outgrows memory_limit (rows of 10,000 columns) fails the run at once, naming the fix', async () => {
    const columns = Array.from({ length: 10_000 }, (_, i) => i)
    const row = columns.join(',')
    await p.write('events.csv', `${columns.map((i) => `c${i}`).join(',')}\n${row}\n${row}\n`)
    const run = await syncInto('Duckdb: { path: ./warehouse.duckdb }')
    expect(run.signal).toBeNull()
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/ran out of DuckDB's memory_limit \(256MB\).*raise memory_limit/)
    expect(run.stderr).not.toMatch(/retry later/)
  })
})
