/**
 * skipprd as a user installs it: every workspace package it depends on is packed (`pnpm pack`, which
 * turns `workspace:` ranges into versions), the tarballs are installed with npm into an empty
 * directory outside the workspace, third-party dependencies come from the registry, and the
 * installed `skipprd` runs the connectors its README calls bundled: sources Sample, File and
 * Postgres, sinks Duckdb, Postgres, File and Stdout. A connector left in devDependencies is missing
 * from such an install, and its pipeline fails here. A connector that is not bundled, installed
 * on its own beside skipprd (`@skippr/sink-amqp`, into the local RabbitMQ), is found by its type name.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { DuckDBInstance } from '@duckdb/node-api'
import amqp from 'amqplib'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ROWS = 1000
const AMQP_URL = process.env.SKIPPR_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'

interface Manifest {
  readonly name: string
  readonly private?: boolean
  readonly dependencies?: Record<string, string>
}

/** Workspace package directories by package name. */
function workspacePackages(): Map<string, string> {
  const dirs = new Map<string, string>()
  for (const group of ['packages', 'apps']) {
    for (const entry of readdirSync(path.join(ROOT, group))) {
      const dir = path.join(ROOT, group, entry)
      try {
        const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest
        if (!manifest.private) dirs.set(manifest.name, dir)
      } catch {
        // not a package
      }
    }
  }
  return dirs
}

/** `name` and the workspace packages it depends on, at any depth. */
function withWorkspaceDependencies(name: string, packages: Map<string, string>): string[] {
  const seen = new Set<string>()
  const visit = (current: string) => {
    const dir = packages.get(current)
    if (!dir || seen.has(current)) return
    seen.add(current)
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency)
  }
  visit(name)
  return [...seen]
}

let work: string
let tarballs: string
let installed: string
let database: string

/**
 * The environment of a user's shell: without what pnpm adds for the test process (NODE_PATH points
 * into the workspace's store, where every workspace package resolves).
 */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env))
    if (key !== 'NODE_PATH' && !/^(npm|pnpm)_/i.test(key)) env[key] = value
  return { ...env, ...extra }
}

/** The installed skipprd, run in the install directory. */
async function skipprd(args: string[], env: Record<string, string> = {}) {
  const bin = path.join(installed, 'node_modules', '.bin', 'skipprd')
  return run(bin, args, { cwd: installed, env: userEnv(env), maxBuffer: 64 << 20 })
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'skippr-packaging-'))
  tarballs = path.join(work, 'tarballs')
  installed = path.join(work, 'app')
  const packages = workspacePackages()
  for (const name of withWorkspaceDependencies('skipprd', packages))
    await run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: packages.get(name)! })
  await mkdir(installed, { recursive: true })
  await run('npm', ['init', '-y'], { cwd: installed, env: userEnv({}) })
  const files = readdirSync(tarballs).map((file) => path.join(tarballs, file))
  await run('npm', ['install', '--no-audit', '--no-fund', ...files], { cwd: installed, env: userEnv({}) })
  database = `skippr_packaging_${randomBytes(4).toString('hex')}`
  await withPostgres(PG_URL, (client) => client.query(`CREATE DATABASE ${database}`))
})

afterAll(async () => {
  if (database) await withPostgres(PG_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${database}`))
  if (work) await rm(work, { recursive: true, force: true })
})

describe('skipprd installed with npm from its packed tarballs', () => {
  it('runs every bundled connector: Sample, File and Postgres in; DuckDB, File, Postgres and Stdout out', async () => {
    const warehouse = new URL(PG_URL)
    warehouse.pathname = `/${database}`
    await writeFile(
      path.join(installed, 'skippr.yml'),
      [
        'data_sources:',
        `  sample: { Sample: { dataset: bikehire, rows: ${ROWS} } }`,
        "  files: { File: { path: './out/rentals/**/*.csv', format: csv, namespace: rentals } }",
        `  warehouse: { Postgres: { connection_string: "\${WAREHOUSE_URL}", tables: [{ name: rentals, cursor: rental_id }] } }`,
        'data_sinks:',
        '  duckdb: { Duckdb: { path: ./warehouse.duckdb } }',
        '  files: { File: { path: ./out, format: csv } }',
        `  postgres: { Postgres: { connection_string: "\${WAREHOUSE_URL}" } }`,
        '  stdout: { Stdout: { format: jsonl } }',
        'pipelines:',
        '  to_duckdb: { data_source: data_sources.sample, data_sink: data_sinks.duckdb }',
        '  to_files: { data_source: data_sources.sample, data_sink: data_sinks.files }',
        '  to_postgres: { data_source: data_sources.sample, data_sink: data_sinks.postgres }',
        '  from_files: { data_source: data_sources.files, data_sink: data_sinks.stdout }',
        '  from_postgres: { data_source: data_sources.warehouse, data_sink: data_sinks.stdout }',
        '',
      ].join('\n'),
    )
    const env = { WAREHOUSE_URL: warehouse.toString() }
    for (const pipeline of ['to_duckdb', 'to_files', 'to_postgres'])
      await skipprd(['sync', '--pipeline', pipeline, '--once', '--output', 'text'], env)
    expect(await duckdbCount(path.join(installed, 'warehouse.duckdb'), 'main.rentals')).toBe(ROWS)
    expect(
      await withPostgres(
        warehouse.toString(),
        async (c) => (await c.query('SELECT count(*)::int AS n FROM public.rentals')).rows[0].n,
      ),
    ).toBe(ROWS)
    for (const pipeline of ['from_files', 'from_postgres']) {
      const { stdout } = await skipprd(['sync', '--pipeline', pipeline, '--once', '--output', 'json'], env)
      const records = stdout.split('\n').filter((line) => line.includes('"rental_id"'))
      expect(records, pipeline).toHaveLength(ROWS)
    }
  })

  it('names the package to install for a known connector that is not installed', async () => {
    await writeFile(
      path.join(installed, 'elsewhere.yml'),
      [
        `data_sources: { sample: { Sample: { dataset: bikehire, rows: ${ROWS} } } }`,
        'data_sinks: { events: { Clickhouse: { url: "http://127.0.0.1:1" } } }',
        'pipelines: { p: { data_source: data_sources.sample, data_sink: data_sinks.events } }',
        '',
      ].join('\n'),
    )
    const failed = await skipprd(['sync', '--config', 'elsewhere.yml', '--once']).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    )
    expect(failed?.code).toBe(1)
    expect(failed?.stderr).toContain(
      'connector type Clickhouse needs the package @skippr/sink-clickhouse: install it with `pnpm add @skippr/sink-clickhouse`',
    )
  })

  it('finds a connector installed on its own by its type name: Sample into RabbitMQ through @skippr/sink-amqp', async () => {
    const packages = workspacePackages()
    const before = new Set(readdirSync(tarballs))
    await run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: packages.get('@skippr/sink-amqp')! })
    const [tarball] = readdirSync(tarballs).filter((file) => !before.has(file))
    await run('npm', ['install', '--no-audit', '--no-fund', path.join(tarballs, tarball!)], {
      cwd: installed,
      env: userEnv({}),
    })
    const queue = `skippr_packaging_${randomBytes(4).toString('hex')}`
    const connection = await amqp.connect(AMQP_URL)
    try {
      const channel = await connection.createChannel()
      await channel.assertQueue(queue, { durable: true })
      await writeFile(
        path.join(installed, 'amqp.yml'),
        [
          `data_sources: { sample: { Sample: { dataset: bikehire, rows: ${ROWS} } } }`,
          `data_sinks: { events: { Amqp: { url: "\${AMQP_URL}", exchange: "", routing_key: ${queue} } } }`,
          'pipelines: { p: { data_source: data_sources.sample, data_sink: data_sinks.events } }',
          '',
        ].join('\n'),
      )
      await skipprd(['sync', '--config', 'amqp.yml', '--pipeline', 'p', '--once'], { AMQP_URL })
      expect((await channel.checkQueue(queue)).messageCount).toBe(ROWS)
      await channel.deleteQueue(queue)
    } finally {
      await connection.close()
    }
  })

  it('answers --version with the packed version', async () => {
    const manifest = JSON.parse(await readFile(path.join(ROOT, 'apps', 'skipprd', 'package.json'), 'utf8'))
    const { stdout } = await skipprd(['--version'])
    expect(stdout.trim()).toBe(manifest.version)
  })
})

async function duckdbCount(file: string, table: string): Promise<number> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' })
  try {
    const connection = await instance.connect()
    const reader = await connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${table}`)
    connection.closeSync()
    return Number(reader.getRowObjects()[0]?.n)
  } finally {
    instance.closeSync()
  }
}

async function withPostgres<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}
