import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CONFIG_INVALID } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadConfigFile } from '../src/config/load.js'
import { packageName, resolveSink, resolveSource } from '../src/connectors.js'
import { tempDir } from './support/runner.js'

let dir: string
beforeEach(async () => {
  dir = await tempDir()
  // A connector installed beside skippr.yml, as a user would: found before skipprd's own dependencies.
  const pkg = path.join(dir, 'node_modules', '@skippr', 'source-fixture')
  await mkdir(pkg, { recursive: true })
  await writeFile(
    path.join(pkg, 'package.json'),
    JSON.stringify({ name: '@skippr/source-fixture', type: 'module', exports: './index.js' }),
  )
  await writeFile(
    path.join(pkg, 'index.js'),
    `export const source = {
      kind: 'source',
      type: 'Fixture',
      secretFields: ['password'],
      config: {
        '~standard': {
          version: 1,
          vendor: 'fixture',
          validate: (value) =>
            typeof value.rows === 'number'
              ? { value }
              : { issues: [{ path: ['rows'], message: 'rows must be a number' }] },
        },
      },
      create: () => { throw new Error('not used') },
    }\n`,
  )
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function config(sources: string, env: Record<string, string> = {}) {
  await writeFile(
    path.join(dir, 'skippr.yml'),
    `data_sources:\n${sources}\ndata_sinks:\n  lake:\n    Nothing: {}\n`,
  )
  return loadConfigFile({ cwd: dir, env })
}

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  return promise.then(
    () => {
      throw new Error('expected a failure')
    },
    (error: Error & { code?: string }) => error,
  )
}

it('names the package after the section and the type', () => {
  expect(packageName('data_sinks', 'Duckdb')).toBe('@skippr/sink-duckdb')
  expect(packageName('data_sources', 'Postgres')).toBe('@skippr/source-postgres')
  expect(packageName('data_sources', 'GoogleAnalytics')).toBe('@skippr/source-google-analytics')
})

describe('resolving a connector', () => {
  it('loads the package beside skippr.yml and validates its fields', async () => {
    const file = await config(`  fx:\n    Fixture: { rows: 3, password: \${FX_PASSWORD} }`, {
      FX_PASSWORD: 'hunter22',
    })
    const resolved = await resolveSource(file, 'fx')
    expect(resolved.type).toBe('Fixture')
    expect(resolved.config).toEqual({ rows: 3, password: 'hunter22' })
    expect(resolved.secrets).toEqual(['hunter22'])
  })

  it("reports the connector's own validation error with the path", async () => {
    const file = await config('  fx:\n    Fixture: { rows: many }')
    const error = await failure(resolveSource(file, 'fx'))
    expect(error.code).toBe(CONFIG_INVALID)
    expect(error.message).toBe('skippr.yml: data_sources.fx.Fixture.rows: rows must be a number')
  })

  it('refuses a secret written in the file', async () => {
    const file = await config('  fx:\n    Fixture: { rows: 3, password: hunter22 }')
    const error = await failure(resolveSource(file, 'fx'))
    expect(error.code).toBe(CONFIG_INVALID)
    expect(error.message).toBe(
      `skippr.yml: data_sources.fx.Fixture.password: a secret must not be written in the file: put it in .env as FX_PASSWORD=… and write \${FX_PASSWORD}`,
    )
    expect(error.message).not.toContain('hunter22')
  })

  it('lists the known types for a type no package provides, instead of an install command', async () => {
    const file = await config('  fx:\n    Fixture: { rows: 3 }')
    const error = await failure(resolveSink(file, 'lake'))
    expect(error.code).toBe(CONFIG_INVALID)
    expect(error.message).toBe(
      'skippr.yml: data_sinks.lake: Nothing is not a sink type skipprd knows: the sink types are Amqp, AzureBlob, Bigquery, Clickhouse, Duckdb, File, Postgres, S3, Sftp, Snowflake, Stdout',
    )
  })

  it('asks for the exact type name', async () => {
    const file = await config('  fx:\n    fixture: { rows: 3 }')
    const error = await failure(resolveSource(file, 'fx'))
    expect(error.message).toBe('skippr.yml: data_sources.fx: unknown connector type fixture: write Fixture')
  })
})
