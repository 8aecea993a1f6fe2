/**
 * What the value tests share: a fresh PostgreSQL schema per test, and `sync --once` of File
 * sources into one sink through the built CLI, each source its own pipeline.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, afterEach, beforeEach, expect } from 'vitest'
import { runCli } from './cli.js'
import type { Project } from './project.js'

export const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A schema named `<prefix>_<random>` for each test of the file, dropped after it, and a pool that reads it. */
export function pgSchemaPerTest(prefix: string): { readonly admin: pg.Pool; name(): string } {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 })
  let name = ''
  beforeEach(() => {
    name = `${prefix}_${randomBytes(5).toString('hex')}`
  })
  afterEach(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
  })
  afterAll(async () => {
    await admin.end()
  })
  return { admin, name: () => name }
}

/** The sink entry for the test's PostgreSQL schema, its URL from the environment as a user would write it. */
export const postgresSink = (schema: string) =>
  `Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} }`

/**
 * Writes skippr.yml with one pipeline per File source of `sources` (name → the File entry's fields)
 * into `sink`, and syncs each once; each must exit 0, with nothing on stderr, having read `rows[name]` rows.
 */
export async function syncFiles(
  p: Project,
  sources: Record<string, string>,
  sink: string,
  rows: Record<string, number>,
): Promise<void> {
  const names = Object.keys(sources)
  await p.write(
    'skippr.yml',
    [
      'data_sources:',
      ...names.map((name) => `  ${name}: { File: { ${sources[name]} } }`),
      `data_sinks: { warehouse: { ${sink} } }`,
      'pipelines:',
      ...names.map(
        (name) => `  ${name}: { data_source: data_sources.${name}, data_sink: data_sinks.warehouse }`,
      ),
      '',
    ].join('\n'),
  )
  for (const name of names) {
    const run = await runCli(['sync', '--pipeline', name, '--once', '--output', 'text'], {
      cwd: p.dir,
      env: { WAREHOUSE_URL: PG_URL },
    })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(`rows=${rows[name]} `)
  }
}
