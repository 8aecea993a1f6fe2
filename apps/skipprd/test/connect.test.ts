/** `skipprd connect`, the built CLI editing a user's skippr.yml. */
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'

const made: Project[] = []
afterAll(async () => {
  for (const p of made) await p.remove()
})

const ORIGINAL = `# Skippr config for the bikehire demo
skippr:
  workspace: default # shared with the ops team

data_sources:
  sample:
    Sample: { dataset: bikehire, rows: 300 } # small on purpose

pipelines:
  bikehire:
    data_source: data_sources.sample
    # keep the WAL next to the config
    data_dir: ./data
`

async function open(config: string | undefined = ORIGINAL): Promise<Project> {
  const p = await project(config)
  made.push(p)
  return p
}

const connect = (p: Project, args: string[], env?: Record<string, string>) =>
  runCli(['connect', ...args], { cwd: p.dir, ...(env && { env }) })
const text = (p: Project) => readFile(path.join(p.dir, 'skippr.yml'), 'utf8')

describe.concurrent('skipprd connect', { timeout: 120_000 }, () => {
  it('adds a destination and updates it, keeping the comments, and sync then uses it', async () => {
    const p = await open()
    const added = await connect(p, [
      'data-sink',
      'duckdb',
      '--pipeline',
      'bikehire',
      '--name',
      'warehouse',
      '--path',
      './warehouse.duckdb',
      '--schema',
      'bikes',
    ])
    expect(added.stderr).toBe('')
    expect(added.code).toBe(0)
    expect(added.stdout).toBe(
      "data_sinks.warehouse (Duckdb) is the data_sink of pipeline 'bikehire' in skippr.yml\n",
    )
    const updated = await connect(p, [
      'data-sink',
      'Duckdb',
      '--pipeline=bikehire',
      '--name',
      'warehouse',
      '--path=./lake.duckdb',
    ])
    expect(updated.code).toBe(0)
    expect(await text(p)).toBe(`# Skippr config for the bikehire demo
skippr:
  workspace: default # shared with the ops team

data_sources:
  sample:
    Sample: { dataset: bikehire, rows: 300 } # small on purpose

pipelines:
  bikehire:
    data_source: data_sources.sample
    # keep the WAL next to the config
    data_dir: ./data
    data_sink: data_sinks.warehouse
data_sinks:
  warehouse:
    Duckdb:
      path: ./lake.duckdb
      schema: bikes
`)
    const sync = await runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir })
    expect(sync.stdout).toContain('Sync complete: pipeline=bikehire namespaces=1 rows=300')
    await expect(readFile(path.join(p.dir, 'lake.duckdb'))).resolves.toBeInstanceOf(Buffer)
  })

  it('refuses a plaintext secret with a reference hint and leaves the file as it was; accepts the reference', async () => {
    const p = await open()
    const args = [
      'data-source',
      'postgres',
      '--pipeline',
      'orders',
      '--name',
      'orders_db',
      '--tables',
      '[orders, refunds]',
    ]
    const refused = await connect(p, [
      ...args,
      '--connection-string',
      'postgres://app:s3cr3t-pw@db.internal/shop',
    ])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      '[skippr] config failed: skippr.yml: data_sources.orders_db.Postgres.connection_string: a secret must not be written in the file: ' +
        `put it in .env as ORDERS_DB_CONNECTION_STRING=… and write \${ORDERS_DB_CONNECTION_STRING}\n`,
    )
    expect(await text(p)).toBe(ORIGINAL)

    const accepted = await connect(p, [...args, '--connection-string', `\${ORDERS_DB_URL}`])
    expect(accepted.stderr).toBe('')
    expect(accepted.code).toBe(0)
    expect(await text(p)).toBe(
      `${ORIGINAL}  orders:
    data_source: data_sources.orders_db
`.replace(
        '    Sample: { dataset: bikehire, rows: 300 } # small on purpose\n',
        `    Sample: { dataset: bikehire, rows: 300 } # small on purpose
  orders_db:
    Postgres:
      tables:
        - orders
        - refunds
      connection_string: \${ORDERS_DB_URL}
`,
      ),
    )
  })

  it('validates against the connector schema and the file structure before writing anything', async () => {
    const p = await open()
    const unknownField = await connect(p, [
      'data-sink',
      'duckdb',
      '--pipeline',
      'bikehire',
      '--name',
      'w',
      '--path',
      'x.duckdb',
      '--shema',
      'a',
    ])
    expect(unknownField.code).toBe(1)
    expect(unknownField.stderr).toBe(
      '[skippr] config failed: skippr.yml: data_sinks.w.Duckdb: unknown key shema: remove it or check its spelling\n',
    )
    const noSource = await connect(p, [
      'data-sink',
      'duckdb',
      '--pipeline',
      'other',
      '--name',
      'w',
      '--path',
      'x.duckdb',
    ])
    expect(noSource.code).toBe(2)
    expect(noSource.stderr).toContain(
      "pipeline 'other' has no data_source yet: add one first with skipprd connect data-source",
    )
    const missingName = await connect(p, [
      'data-source',
      'sample',
      '--pipeline',
      'bikehire',
      '--dataset',
      'bikehire',
    ])
    expect(missingName.code).toBe(2)
    expect(missingName.stderr).toBe(
      '[skippr] connect failed: connect needs the entry name: pass --name <name>\n',
    )
    const missingPackage = await connect(p, [
      'data-source',
      'mongo-db',
      '--pipeline',
      'bikehire',
      '--name',
      'm',
    ])
    expect(missingPackage.code).toBe(1)
    expect(missingPackage.stderr).toContain(
      'MongoDb is not a source type skipprd knows: the source types are File, HttpServer, Postgres, Sample, Websocket',
    )
    expect(await text(p)).toBe(ORIGINAL)
  })

  it("writes the vendor's workspace flags into the skippr section; other commands take and ignore them", async () => {
    const p = await open()
    const written = await connect(p, [
      'data-sink',
      'stdout',
      '--pipeline',
      'bikehire',
      '--name',
      'out',
      '--workspace',
      'ops',
      '--tenant',
      'acme',
      '--storage-mode',
      'local',
      '--skippr-s3-bucket',
      'wal-bucket/prod',
    ])
    expect(written.code, written.stderr).toBe(0)
    const yml = await text(p)
    expect(yml).toContain('skippr:\n  workspace: ops # shared with the ops team\n')
    expect(yml).toContain('  tenant: acme\n  storage_mode: local\n  wal_s3_bucket: wal-bucket/prod\n')
    // The file as written is one sync accepts; the flags on another command change nothing.
    const discovered = await runCli(['discover', '--tenant', 'other', '--workspace', 'ignored'], {
      cwd: p.dir,
    })
    expect(discovered.code, discovered.stderr).toBe(0)
    expect(await text(p)).toBe(yml)
  })

  it('creates skippr.yml when there is none', async () => {
    const p = await open(undefined)
    await rm(path.join(p.dir, 'skippr.yml'), { force: true })
    const created = await connect(p, [
      'data-source',
      'sample',
      '--pipeline',
      'demo',
      '--name',
      'sample',
      '--dataset',
      'bikehire',
      '--rows',
      '25',
    ])
    expect(created.code).toBe(0)
    expect(await text(p)).toBe(
      'data_sources:\n  sample:\n    Sample:\n      dataset: bikehire\n      rows: 25\npipelines:\n  demo:\n    data_source: data_sources.sample\n',
    )
  })
})
