/** `.env`, `.env.local` and the process environment, as the built CLI combines them. */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  // The pipeline's data directory comes from the environment: where the run put its WAL shows
  // which value won.
  p = await project(
    `data_sources:\n  sample:\n    Sample: { dataset: bikehire, rows: 10 }\npipelines:\n  bikehire:\n    data_source: data_sources.sample\n    data_dir: \${PIPELINE_DIR}\n`,
  )
})
afterEach(async () => {
  await p.remove()
})

const sync = (env: Record<string, string>) =>
  runCli(['sync', '--once', '--output', 'text'], { cwd: p.dir, env })

const walIn = (dir: string) => existsSync(path.join(p.dir, dir, 'wal'))

it('.env fills a variable the shell exports empty', async () => {
  await p.write('.env', 'PIPELINE_DIR=from-dotenv\n')
  const result = await sync({ PIPELINE_DIR: '' })
  expect(result).toMatchObject({ code: 0, stderr: '' })
  expect(walIn('from-dotenv')).toBe(true)
})

it('.env does not override a value the shell sets', async () => {
  await p.write('.env', 'PIPELINE_DIR=from-dotenv\n')
  expect((await sync({ PIPELINE_DIR: 'from-shell' })).code).toBe(0)
  expect([walIn('from-shell'), walIn('from-dotenv')]).toEqual([true, false])
})

it('.env.local overrides the shell and .env', async () => {
  await p.write('.env', 'PIPELINE_DIR=from-dotenv\n')
  await p.write('.env.local', 'PIPELINE_DIR=from-local\n')
  expect((await sync({ PIPELINE_DIR: 'from-shell' })).code).toBe(0)
  expect([walIn('from-local'), walIn('from-shell'), walIn('from-dotenv')]).toEqual([true, false, false])
})

it(`an empty \${NAME} names the variable and where it is used`, async () => {
  const result = await sync({ PIPELINE_DIR: '' })
  expect(result).toMatchObject({
    code: 1,
    stdout: '',
    stderr: `[skippr] config failed: skippr.yml: pipelines.bikehire.data_dir: \${PIPELINE_DIR}: that environment variable is empty: give it a value (export PIPELINE_DIR=…, or in .env beside the config file)\n`,
  })
})

it(`an empty \${NAME} in a connector's field names it too, not the field's length rule`, async () => {
  await p.write(
    'skippr.yml',
    `data_sources:\n  sample:\n    Sample: { dataset: bikehire, rows: 10 }\ndata_sinks:\n  warehouse:\n    Postgres: { connection_string: \${WAREHOUSE_URL} }\npipelines:\n  bikehire:\n    data_source: data_sources.sample\n    data_sink: data_sinks.warehouse\n`,
  )
  await p.write('.env.local', 'WAREHOUSE_URL=\n')
  const result = await sync({ WAREHOUSE_URL: 'postgres://app@127.0.0.1/shop' })
  expect(result).toMatchObject({
    code: 1,
    stderr: `[skippr] config failed: skippr.yml: data_sinks.warehouse.Postgres.connection_string: \${WAREHOUSE_URL}: that environment variable is empty: give it a value (export WAREHOUSE_URL=…, or in .env beside the config file)\n`,
  })
})
