import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CONFIG_INVALID, hasCode } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { interpolate } from '../src/config/interpolate.js'
import { loadConfigFile, locateConfig } from '../src/config/load.js'
import { pipelineSettings } from '../src/config/settings.js'
import { walStorage } from '../src/config/wal-storage.js'
import { CONFIG_NOT_FOUND, ENV_NOT_SET, WAL_STORAGE_INVALID, WAL_STORAGE_UNAVAILABLE } from '../src/errors.js'
import { checkWalStorage } from '../src/runner/wal-backend.js'
import { tempDir } from './support/runner.js'

let dir: string
beforeEach(async () => {
  dir = await tempDir()
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const BASE = `
data_sources:
  sample:
    Sample: { dataset: bikehire, rows: 100 }
data_sinks:
  warehouse:
    Duckdb: { path: ./warehouse.duckdb }
pipelines:
  bikehire:
    data_source: data_sources.sample
    data_sink: data_sinks.warehouse
`

async function write(name: string, text: string): Promise<string> {
  const file = path.join(dir, name)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, text)
  return file
}

function failure(fn: () => unknown): Error & { code?: string } {
  try {
    fn()
  } catch (error) {
    return error as Error & { code?: string }
  }
  throw new Error('expected a failure')
}

describe('locating skippr.yml', () => {
  it('takes --config, then SKIPPR_CONFIG_FILE, then skippr.yml / skippr.yaml in the working directory', async () => {
    await write('skippr.yaml', BASE)
    expect(locateConfig({ cwd: dir, env: {} })).toEqual({
      path: path.join(dir, 'skippr.yaml'),
      label: 'skippr.yaml',
      shadowed: [],
    })
    await write('skippr.yml', BASE)
    expect(locateConfig({ cwd: dir, env: {} }).label).toBe('skippr.yml')
    await write('etc/env.yml', BASE)
    expect(locateConfig({ cwd: dir, env: { SKIPPR_CONFIG_FILE: 'etc/env.yml' } }).label).toBe('etc/env.yml')
    await write('etc/flag.yml', BASE)
    expect(
      locateConfig({ config: 'etc/flag.yml', cwd: dir, env: { SKIPPR_CONFIG_FILE: 'etc/env.yml' } }).label,
    ).toBe('etc/flag.yml')
  })

  it('says where it looked and how to fix it', () => {
    const error = failure(() => locateConfig({ cwd: dir, env: {} }))
    expect(error.code).toBe(CONFIG_NOT_FOUND)
    expect(error.message).toBe(
      `no skippr.yml, skippr.yaml, skipprd.yml, skipprd.yaml, skipprd.toml or skipprd.json in ${dir}: create skippr.yml there or pass --config <path>`,
    )
    expect(failure(() => locateConfig({ config: 'nope.yml', cwd: dir, env: {} })).message).toBe(
      'nope.yml: no such config file: create skippr.yml there or pass --config <path>',
    )
  })
})

describe('.env files', () => {
  it('reads .env and .env.local beside skippr.yml: .env fills what the process leaves unset or empty, .env.local wins', async () => {
    await write('conf/skippr.yml', BASE)
    await write('conf/.env', 'A=from-env\nB=from-env\nC=from-env\nD=from-env\n')
    await write('conf/.env.local', 'D=from-local\n')
    const file = loadConfigFile({
      config: 'conf/skippr.yml',
      cwd: dir,
      env: { B: '', C: 'from-process', D: 'from-process' },
    })
    expect([file.env.A, file.env.B, file.env.C, file.env.D]).toEqual([
      'from-env',
      'from-env',
      'from-process',
      'from-local',
    ])
    expect(file.dir).toBe(path.join(dir, 'conf'))
  })
})

describe(`\${NAME} references`, () => {
  it('replaces whole values and records where they were', () => {
    const { value, references } = interpolate(
      { url: `\${DB_URL}`, tables: [`\${T}`] },
      { DB_URL: 'pg://x', T: 'orders' },
      'skippr.yml',
      'data_sources.orders.Postgres',
    )
    expect(value).toEqual({ url: 'pg://x', tables: ['orders'] })
    expect([...references]).toEqual([
      ['url', 'DB_URL'],
      ['tables.0', 'T'],
    ])
  })

  it('fails with the seed text when the variable is not set', () => {
    const error = failure(() =>
      interpolate({ url: `\${ORDERS_DB_URL}` }, {}, 'skippr.yml', 'data_sources.orders.Postgres'),
    )
    expect(error.code).toBe(ENV_NOT_SET)
    expect(error.message).toBe(
      `skippr.yml: data_sources.orders.Postgres.url: \${ORDERS_DB_URL}: that environment variable is not set`,
    )
  })

  it('refuses a reference inside a longer value', () => {
    const error = failure(() =>
      interpolate({ path: `\${HOME}/x` }, { HOME: '/h' }, 'skippr.yml', 'data_sinks.w.File'),
    )
    expect(error.code).toBe(CONFIG_INVALID)
    expect(error.message).toBe(
      `skippr.yml: data_sinks.w.File.path: a \${NAME} reference must be the whole value: move the whole value into the environment variable`,
    )
  })

  it('interpolates pipeline keys when the file loads', async () => {
    await write('skippr.yml', `${BASE}    data_dir: \${PIPELINE_DIR}\n`)
    const file = loadConfigFile({ cwd: dir, env: { PIPELINE_DIR: 'state' } })
    expect(file.data.pipelines?.bikehire?.data_dir).toBe('state')
    const error = failure(() => loadConfigFile({ cwd: dir, env: {} }))
    expect(error.message).toBe(
      `skippr.yml: pipelines.bikehire.data_dir: \${PIPELINE_DIR}: that environment variable is not set`,
    )
  })
})

describe('structure', () => {
  const load = async (text: string) => {
    await write('skippr.yml', text)
    return failure(() => loadConfigFile({ cwd: dir, env: {} }))
  }

  it('rejects an unknown key with the file, the path and a hint', async () => {
    const error = await load(`${BASE}    sync_frequency: 60\n`)
    expect(error.code).toBe(CONFIG_INVALID)
    expect(error.message).toBe(
      'skippr.yml: pipelines.bikehire: unknown key sync_frequency: remove it or check its spelling (did you mean sync_frequency_seconds?)',
    )
    expect((await load(`${BASE}pipeline: {}\n`)).message).toBe(
      'skippr.yml: unknown key pipeline: remove it or check its spelling (did you mean pipelines?)',
    )
  })

  it('rejects a bad value with its path', async () => {
    const error = await load(`${BASE}    sync_frequency_seconds: often\n`)
    expect(error.message).toBe(
      'skippr.yml: pipelines.bikehire.sync_frequency_seconds: expected number, received string',
    )
  })

  it('rejects a dangling reference, suggesting the entry meant', async () => {
    const typo = await load(BASE.replace('data_sink: data_sinks.warehouse', 'data_sink: data_sinks.warehous'))
    expect(typo.message).toBe(
      'skippr.yml: pipelines.bikehire.data_sink: data_sinks.warehous is not defined: did you mean data_sinks.warehouse?',
    )
    const other = await load(BASE.replace('data_sink: data_sinks.warehouse', 'data_sink: data_sinks.lake'))
    expect(other.message).toBe(
      'skippr.yml: pipelines.bikehire.data_sink: data_sinks.lake is not defined: define it under data_sinks, or use one of data_sinks.warehouse',
    )
    const section = await load(
      BASE.replace('data_source: data_sources.sample', 'data_source: data_sinks.warehouse'),
    )
    expect(section.message).toBe(
      "skippr.yml: pipelines.bikehire.data_source: 'data_sinks.warehouse' must have the form data_sources.<name> (data_sinks entries cannot be used as a data_source)",
    )
  })

  it('requires exactly one connector type per entry', async () => {
    const error = await load(
      BASE.replace('Sample: { dataset: bikehire, rows: 100 }', 'Sample: {}\n    File: {}'),
    )
    expect(error.message).toBe(
      'skippr.yml: data_sources.sample: an entry holds exactly one connector type, e.g. `Duckdb: { path: ./warehouse.duckdb }`',
    )
  })

  it('reports YAML syntax errors with line and column', async () => {
    const error = await load('pipelines:\n  a: [\n')
    expect(error.message).toMatch(/^skippr\.yml:\d+:\d+: not valid YAML: /)
  })
})

describe('pipeline settings', () => {
  it('resolves data_dir against the config directory, DATA_DIR against the working directory', async () => {
    await write('conf/skippr.yml', BASE)
    const file = loadConfigFile({ config: 'conf/skippr.yml', cwd: dir, env: {} })
    expect(pipelineSettings(file, 'bikehire', {}, dir, true).dataDir).toBe(path.join(dir, 'conf', 'data'))
    const withEnv = loadConfigFile({ config: 'conf/skippr.yml', cwd: dir, env: { DATA_DIR: 'var' } })
    expect(pipelineSettings(withEnv, 'bikehire', {}, dir, true).dataDir).toBe(path.join(dir, 'var'))
    await write('conf/skippr.yml', `${BASE}    data_dir: ./pipe\n`)
    const own = loadConfigFile({ config: 'conf/skippr.yml', cwd: dir, env: { DATA_DIR: 'var' } })
    expect(pipelineSettings(own, 'bikehire', {}, dir, true).dataDir).toBe(path.join(dir, 'conf', 'pipe'))
  })

  it('turns chaos mode on from SKIPPR_CHAOS_MODE or chaos_mode', async () => {
    await write('skippr.yml', BASE)
    const settings = (env: Record<string, string>) =>
      pipelineSettings(loadConfigFile({ cwd: dir, env }), 'bikehire', {}, dir, true)
    expect(settings({}).chaos).toBe(false)
    expect(settings({ SKIPPR_CHAOS_MODE: 'yes' }).chaos).toBe(true)
    await write('skippr.yml', `${BASE}    chaos_mode: true\n`)
    expect(settings({}).chaos).toBe(true)
  })

  it('takes the store type from skippr.yml, then --store-type, then SKIPPR_STORE_TYPE', async () => {
    await write('skippr.yml', BASE)
    const file = loadConfigFile({ cwd: dir, env: { SKIPPR_STORE_TYPE: 'from-env' } })
    expect(pipelineSettings(file, 'bikehire', {}, dir, true).store.type).toBe('from-env')
    expect(pipelineSettings(file, 'bikehire', { storeType: 'from-flag' }, dir, true).store.type).toBe(
      'from-flag',
    )
    await write('skippr.yml', `skippr: { store: { type: sled } }\n${BASE}`)
    const yaml = loadConfigFile({ cwd: dir, env: { SKIPPR_STORE_TYPE: 'from-env' } })
    expect(pipelineSettings(yaml, 'bikehire', { storeType: 'from-flag' }, dir, true).store.type).toBe('sled')
  })

  it('accepts WAL_STORAGE=disk and s3 with a bucket, and explains the others', async () => {
    await write('skippr.yml', BASE)
    const pipelineSettingsFor = (env: Record<string, string>) =>
      pipelineSettings(loadConfigFile({ cwd: dir, env }), 'bikehire', {}, dir, false)
    expect(walStorage(undefined, {}, true)).toBe('disk')
    expect(walStorage(undefined, { WAL_STORAGE: 'disk' }, false)).toBe('disk')
    const unknown = failure(() => walStorage(undefined, { WAL_STORAGE: 'tape' }, true))
    expect(unknown.code).toBe(WAL_STORAGE_INVALID)
    expect(unknown.message).toBe('WAL_STORAGE=tape is not a WAL backend: use disk, s3 or clustered')
    const clustered = failure(() => walStorage(undefined, { WAL_STORAGE: 'clustered' }, true))
    expect(clustered.code).toBe(WAL_STORAGE_UNAVAILABLE)
    expect(clustered.message).toMatch(/^WAL_STORAGE=clustered does not support sync --once/)
    const noBucket = pipelineSettingsFor({ WAL_STORAGE: 's3' })
    expect(failure(() => checkWalStorage(noBucket)).message).toBe(
      'WAL_STORAGE=s3 needs a bucket: set SKIPPR_WAL_S3_BUCKET (or SKIPPR_S3_BUCKET), --wal-s3-bucket, or skippr.wal_s3_bucket in skippr.yml',
    )
    expect(pipelineSettingsFor({ WAL_STORAGE: 's3', SKIPPR_S3_BUCKET: 'lake' }).walS3Bucket).toBe('lake')
    expect(
      pipelineSettingsFor({ WAL_STORAGE: 's3', SKIPPR_S3_BUCKET: 'lake', SKIPPR_WAL_S3_BUCKET: 'wal' })
        .walS3Bucket,
    ).toBe('wal')
    checkWalStorage(pipelineSettingsFor({ WAL_STORAGE: 's3', SKIPPR_WAL_S3_BUCKET: 'wal' }))
  })
})

it('hasCode identifies config errors', () => {
  expect(hasCode({ code: CONFIG_INVALID }, CONFIG_INVALID)).toBe(true)
})

it(`accepts \${NAME} inside flow mappings, as the README's examples write it`, async () => {
  await writeFile(
    path.join(dir, 'skippr.yml'),
    `data_sources:\n  orders:\n    Postgres: { connection_string: \${ORDERS_DB_URL}, tables: [orders] }\npipelines:\n  p: { data_source: data_sources.orders }\n`,
  )
  const file = loadConfigFile({ cwd: dir, env: {} })
  expect(file.data.data_sources?.orders).toEqual({
    Postgres: { connection_string: `\${ORDERS_DB_URL}`, tables: ['orders'] },
  })
})
