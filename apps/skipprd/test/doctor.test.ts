/**
 * `skipprd doctor` through the built CLI, against the real PostgreSQL (a schema per test) and
 * DuckDB files: a healthy config, then each kind of failure it must name.
 *
 * The unwritable data dir is a read-only tmpfs when the tests run as root (root writes anywhere
 * else, whatever the mode), else a directory without write permission.
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { PG_URL, pgSchemaPerTest } from './support/file-sync.js'
import { type Project, project } from './support/project.js'

const { admin, name: schemaName } = pgSchemaPerTest('skippr_doctor')
/** The same server with a password in the URL: trust auth ignores it, the report must not show it. */
const PASSWORD = `pw-${randomBytes(6).toString('hex')}`
const SECRET_URL = PG_URL.replace(/\/\/([^@/:]*)@/, `//$1:${PASSWORD}@`)
/** Nothing listens on port 1. */
const DOWN_URL = SECRET_URL.replace(/@[^/]+\//, '@127.0.0.1:1/')

let p: Project
let unwritable: string | undefined
beforeEach(async () => {
  p = await project()
  await admin.query(`CREATE SCHEMA "${schemaName()}"`)
  await admin.query(`CREATE TABLE "${schemaName()}".items (id int PRIMARY KEY, name text)`)
})
afterEach(async () => {
  if (unwritable) await makeWritable(unwritable)
  unwritable = undefined
  await admin.query(`DROP SCHEMA IF EXISTS "${schemaName()}_sink" CASCADE`)
  await p.remove()
})

/** Two pipelines: Sample → DuckDB, and a PostgreSQL table → PostgreSQL (its own schema, not created yet). */
function config(extra: { sinks?: string; pipelines?: string } = {}): string {
  const schema = schemaName()
  return [
    'data_sources:',
    '  sample:',
    '    Sample: { dataset: bikehire, rows: 500 }',
    '  db:',
    `    Postgres: { connection_string: \${SOURCE_URL}, tables: [{ name: items, schema: ${schema} }] }`,
    'data_sinks:',
    '  warehouse:',
    '    Duckdb: { path: ./warehouse.duckdb }',
    '  pg:',
    `    Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema}_sink }`,
    ...(extra.sinks ? [extra.sinks] : []),
    'pipelines:',
    '  bikehire: { data_source: data_sources.sample, data_sink: data_sinks.warehouse }',
    '  items: { data_source: data_sources.db, data_sink: data_sinks.pg }',
    ...(extra.pipelines ? [extra.pipelines] : []),
    '',
  ].join('\n')
}

const HEALTHY_ENV = { SOURCE_URL: SECRET_URL, WAREHOUSE_URL: SECRET_URL }

function doctor(args: string[] = [], env: Record<string, string | undefined> = HEALTHY_ENV) {
  return runCli(['doctor', ...args], { cwd: p.dir, env })
}

/** Each report line as [ok, name, message]. */
function lines(stdout: string): [boolean, string, string][] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => {
      const match = /^\[(ok|FAIL)\] ([^:]+(?::[^:\s]+)?): (.*)$/.exec(line)
      if (!match) throw new Error(`not a report line: ${line}`)
      return [match[1] === 'ok', match[2] as string, match[3] as string]
    })
}

const line = (stdout: string, name: string) => lines(stdout).find(([, n]) => n === name)
const failedNames = (stdout: string) =>
  lines(stdout)
    .filter(([ok]) => !ok)
    .map(([, name]) => name)

const ALL_CHECKS = [
  'config',
  'env',
  'connectors',
  'source:sample',
  'sink:warehouse',
  'source:db',
  'sink:pg',
  'data_dir',
  'wal:bikehire',
  'lease:bikehire',
  'wal:items',
  'lease:items',
  'state',
]

describe('skipprd doctor', () => {
  it('passes every check of a healthy config, in order, and creates nothing', async () => {
    await p.write('skippr.yml', config())
    const run = await doctor()
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(lines(run.stdout).map(([ok, name]) => [ok, name])).toEqual(ALL_CHECKS.map((name) => [true, name]))
    expect(line(run.stdout, 'source:sample')?.[2]).toBe('not supported by Sample')
    expect(line(run.stdout, 'sink:pg')?.[2]).toBe('Postgres: reachable')
    expect(line(run.stdout, 'data_dir')?.[2]).toMatch(
      /^.+ \(not created yet: the first sync creates it\): writable, [\d.]+ [KMGT]?B free$/,
    )
    expect(run.stdout).not.toContain(PASSWORD)
    // Side-effect free: no data dir, no DuckDB file, no destination schema.
    expect(existsSync(path.join(p.dir, 'data'))).toBe(false)
    expect(existsSync(path.join(p.dir, 'warehouse.duckdb'))).toBe(false)
    const sinkSchema = await admin.query('SELECT to_regnamespace($1) AS found', [`"${schemaName()}_sink"`])
    expect(sinkSchema.rows[0].found).toBeNull()
  })

  it('prints {"ok","checks":[{name,ok,message}]} with --output json, and -p limits it to one pipeline', async () => {
    await p.write('skippr.yml', config())
    const run = await doctor(['--output', 'json', '-p', 'bikehire'])
    expect(run.code).toBe(0)
    const report = JSON.parse(run.stdout) as {
      ok: boolean
      checks: { name: string; ok: boolean; message: string }[]
    }
    expect(report.ok).toBe(true)
    expect(report.checks.map((c) => c.name)).toEqual([
      'config',
      'env',
      'connectors',
      'source:sample',
      'sink:warehouse',
      'data_dir',
      'wal:bikehire',
      'lease:bikehire',
      'state',
    ])
    for (const check of report.checks) expect(Object.keys(check)).toEqual(['name', 'ok', 'message'])
  })

  it('after a sync: the WAL reads back, the lease is free, the store opens', async () => {
    await p.write('skippr.yml', config())
    const sync = await runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir })
    expect(sync.code).toBe(0)
    const run = await doctor(['-p', 'bikehire'])
    expect(run.code).toBe(0)
    expect(line(run.stdout, 'wal:bikehire')?.[2]).toBe(
      'reads back: 0 pending batch(es), 0 row(s) not landed yet',
    )
    expect(line(run.stdout, 'lease:bikehire')?.[2]).toMatch(/^free: last held by .+, released$/)
    expect(line(run.stdout, 'state')?.[2]).toMatch(/^sled store of pipeline 'bikehire' .*: opens$/)
    expect(line(run.stdout, 'sink:warehouse')?.[2]).toBe('Duckdb: reachable')
  })

  it('an unset variable fails env and the entry that uses it, and nothing else', async () => {
    await p.write('skippr.yml', config())
    const run = await doctor([], { SOURCE_URL: SECRET_URL })
    expect(run.code).toBe(1)
    expect(failedNames(run.stdout)).toEqual(['env', 'sink:pg'])
    expect(line(run.stdout, 'env')?.[2]).toBe(
      `skippr.yml: data_sinks.pg.Postgres.connection_string: \${WAREHOUSE_URL}: no value in the environment: export WAREHOUSE_URL=…, or set it in .env beside skippr.yml`,
    )
    expect(line(run.stdout, 'sink:pg')?.[2]).toContain(
      `\${WAREHOUSE_URL}: that environment variable is not set`,
    )
  })

  it("an unset variable in a pipeline's own settings ends the list after the connector checks", async () => {
    await p.write(
      'skippr.yml',
      config({ pipelines: `  more: { data_source: data_sources.sample, data_dir: \${MORE_DIR} }` }),
    )
    const run = await doctor()
    expect(run.code).toBe(1)
    expect(failedNames(run.stdout)).toEqual(['env'])
    expect(line(run.stdout, 'env')?.[2]).toMatch(
      /pipelines\.more\.data_dir: \$\{MORE_DIR\}: .*the pipeline checks run once it is set$/,
    )
    expect(lines(run.stdout).map(([, name]) => name)).toEqual(ALL_CHECKS.slice(0, 7))
  })

  it('a connector type whose package is not installed fails connectors, naming it', async () => {
    await p.write(
      'skippr.yml',
      config({
        sinks: '  lake:\n    Teradata: { account: x }',
        pipelines: '  lake: { data_source: data_sources.sample, data_sink: data_sinks.lake }',
      }),
    )
    const run = await doctor()
    expect(run.code).toBe(1)
    expect(failedNames(run.stdout)).toEqual(['connectors', 'sink:lake'])
    expect(line(run.stdout, 'connectors')?.[2]).toBe(
      'skippr.yml: data_sinks.lake: Teradata is not a sink type skipprd knows: the sink types are Amqp, AzureBlob, Bigquery, Clickhouse, Duckdb, File, Postgres, S3, Sftp, Snowflake, Stdout',
    )
  })

  it('an unreachable PostgreSQL fails its entry, naming the server without the password', async () => {
    await p.write('skippr.yml', config())
    const run = await doctor([], { SOURCE_URL: DOWN_URL, WAREHOUSE_URL: SECRET_URL })
    expect(run.code).toBe(1)
    expect(failedNames(run.stdout)).toEqual(['source:db'])
    expect(line(run.stdout, 'source:db')?.[2]).toMatch(
      /^cannot reach PostgreSQL at postgres:\/\/[^:@/]+@127\.0\.0\.1:1\/\w+: .*ECONNREFUSED/,
    )
    expect(run.stdout + run.stderr).not.toContain(PASSWORD)
  })

  it('an unwritable data dir fails data_dir', async () => {
    await p.write('skippr.yml', config())
    const dataDir = path.join(p.dir, 'data')
    await mkdir(dataDir)
    await makeUnwritable(dataDir)
    unwritable = dataDir
    const run = await doctor([], { ...HEALTHY_ENV, DATA_DIR: dataDir })
    expect(run.code).toBe(1)
    expect(failedNames(run.stdout)).toEqual(['data_dir'])
    expect(line(run.stdout, 'data_dir')?.[2]).toMatch(
      new RegExp(`^${dataDir}: cannot write in ${dataDir} \\((EROFS|EACCES)\\): make it writable`),
    )
  })

  it('a config that does not load is the one check; an unknown option is a bad command line', async () => {
    const missing = await doctor()
    expect(missing.code).toBe(1)
    expect(lines(missing.stdout)).toEqual([
      [false, 'config', expect.stringMatching(/^no skippr\.yml, .* in /)],
    ])
    const bad = await doctor(['--bogus'])
    expect(bad.code).toBe(2)
    expect(bad.stdout).toBe('')
  })
})

async function makeUnwritable(dir: string): Promise<void> {
  if (process.getuid?.() === 0) execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', dir])
  else await chmod(dir, 0o555)
}

async function makeWritable(dir: string): Promise<void> {
  if (process.getuid?.() === 0) execFileSync('umount', [dir])
  else await chmod(dir, 0o755)
}
