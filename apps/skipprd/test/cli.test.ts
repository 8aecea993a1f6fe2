/** The built CLI's command line, and its answers to bad input that needs no connector. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { bikehireConfig, type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: 10 }))
})
afterEach(async () => {
  await p.remove()
})

describe('command line', () => {
  it('prints help and the version, exit 0', async () => {
    const help = await runCli(['--help'], { cwd: p.dir })
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage: skipprd \[options\] \[command\]/)
    for (const flag of [
      '-p, --pipeline <NAME>',
      '--output <MODE>',
      '--config <PATH>',
      '--log [LEVEL]',
      '--wal-storage <MODE>',
      '--wal-s3-bucket <BUCKET>',
      '--store-type <TYPE>',
      '--store-name <NAME>',
      '--create-store',
    ])
      expect(help.stdout).toContain(flag)
    expect(help.stdout).toMatch(/\n {2}sync \[options\] +Read new records/)
    expect(help.stdout).toMatch(/\n {2}discover +Read the source/)
    const syncHelp = await runCli(['sync', '--help'], { cwd: p.dir })
    expect(syncHelp.code).toBe(0)
    expect(syncHelp.stdout).toContain('--once')
    const version = await runCli(['--version'], { cwd: p.dir })
    expect(version).toMatchObject({ code: 0, stdout: '0.1.0\n' })
  })

  it('prints the help written at build time exactly as commander prints it', async () => {
    const live = await runCli(['help'], { cwd: p.dir })
    expect(live.code).toBe(0)
    expect(live.stdout).toMatch(/^Usage: skipprd /)
    for (const flag of ['--help', '-h']) {
      const prebuilt = await runCli([flag], { cwd: p.dir })
      expect(prebuilt).toMatchObject({ code: 0, stdout: live.stdout, stderr: '' })
    }
  })

  it('exits 2 on a bad command line', async () => {
    const unknown = await runCli(['sync', '--onse'], { cwd: p.dir })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("error: unknown option '--onse'")
    const output = await runCli(['sync', '--output', 'xml'], { cwd: p.dir })
    expect(output.code).toBe(2)
    expect(output.stderr).toContain("argument 'xml' is invalid. Allowed choices are progress, text, json.")
    expect((await runCli(['frobnicate'], { cwd: p.dir })).code).toBe(2)
    expect((await runCli([], { cwd: p.dir })).code).toBe(2)
  })
})

describe('bad input: one line on stderr naming file, path and fix; exit 1', () => {
  const sync = (env: Record<string, string> = {}) =>
    runCli(['sync', '--pipeline', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir, env })

  it('unknown key', async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: 10, extra: '    sync_frequency: 60' }))
    const result = await sync()
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      '[skippr] config failed: skippr.yml: pipelines.bikehire: unknown key sync_frequency: remove it or check its spelling (did you mean sync_frequency_seconds?)\n',
    )
    expect(result.stdout).toBe('')
  })

  it('dangling reference', async () => {
    await p.write(
      'skippr.yml',
      bikehireConfig({ rows: 10 }).replace('data_sinks.warehouse', 'data_sinks.warehous'),
    )
    const result = await sync()
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      '[skippr] config failed: skippr.yml: pipelines.bikehire.data_sink: data_sinks.warehous is not defined: did you mean data_sinks.warehouse?\n',
    )
  })

  it(`unset \${NAME}`, async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: 10, extra: `    data_dir: \${BIKEHIRE_DIR}` }))
    const result = await sync()
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `[skippr] config failed: skippr.yml: pipelines.bikehire.data_dir: \${BIKEHIRE_DIR}: that environment variable is not set\n`,
    )
    // The same variable from .env beside skippr.yml is enough.
    await p.write('.env', 'BIKEHIRE_DIR=./state\nWAL_STORAGE=tape\n')
    expect((await sync()).stderr).toBe(
      '[skippr] config failed: WAL_STORAGE=tape is not a WAL backend: use disk, s3 or clustered\n',
    )
  })

  it('unknown WAL_STORAGE, and the modes this build does not have', async () => {
    const unknown = await sync({ WAL_STORAGE: 'tape' })
    expect(unknown).toMatchObject({
      code: 1,
      stderr: '[skippr] config failed: WAL_STORAGE=tape is not a WAL backend: use disk, s3 or clustered\n',
    })
    const clustered = await sync({ WAL_STORAGE: 'clustered' })
    expect(clustered.code).toBe(1)
    expect(clustered.stderr).toBe(
      '[skippr] config failed: WAL_STORAGE=clustered does not support sync --once: drop --once, or use --wal-storage disk\n',
    )
    const s3 = await runCli(['sync', '-p', 'bikehire', '--once', '--wal-storage', 's3'], { cwd: p.dir })
    expect(s3.code).toBe(1)
    expect(s3.stderr).toBe(
      '[skippr] config failed: WAL_STORAGE=s3 needs a bucket: set SKIPPR_WAL_S3_BUCKET (or SKIPPR_S3_BUCKET), --wal-s3-bucket, or skippr.wal_s3_bucket in skippr.yml\n',
    )
  })

  it('WAL_STORAGE=clustered refuses, at start-up, a destination whose retries could duplicate rows', async () => {
    const CLUSTER_NODE = {
      WAL_STORAGE: 'clustered',
      SKIPPR_CLUSTER_LISTEN: '127.0.0.1:7401',
      SKIPPR_CLUSTER_PEERS: '127.0.0.1:7402',
      SKIPPR_CLUSTER_SECRET: 'secret',
    }
    const refusals = [
      ['Stdout: { format: jsonl }', 'Stdout', 'none'],
      ['Clickhouse: { url: "http://127.0.0.1:1" }', 'Clickhouse', 'at-least-once'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a ${NAME} reference in the config, resolved by skipprd
      ['Amqp: { url: "${AMQP_URL}", exchange: events }', 'Amqp', 'at-least-once'],
    ] as const
    for (const [sink, type, tier] of refusals) {
      await p.write('skippr.yml', bikehireConfig({ rows: 10, sink }))
      const result = await runCli(['sync', '-p', 'bikehire'], {
        cwd: p.dir,
        env: { ...CLUSTER_NODE, AMQP_URL: 'amqp://127.0.0.1:1' },
      })
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 1,
        stderr: `[skippr] config failed: WAL_STORAGE=clustered accepts only destinations whose retries cannot duplicate rows (exactly-once, overwrite-on-retry): data_sinks.warehouse (${type}) is ${tier}; use WAL_STORAGE=disk for it, or another destination\n`,
      })
    }
    // An exactly-once destination passes that check and meets the next: the nodes must share a store.
    await p.write('skippr.yml', bikehireConfig({ rows: 10 }))
    const fits = await runCli(['sync', '-p', 'bikehire'], { cwd: p.dir, env: CLUSTER_NODE })
    expect(fits.stderr).toMatch(
      /^\[skippr\] config failed: WAL_STORAGE=clustered needs a state store every node shares/,
    )
  })

  it('serve: one line saying it is not in this build, exit 1', async () => {
    const result = await runCli(['serve'], { cwd: p.dir })
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        '[skippr] serve is not in this build (the Iceberg REST catalog and Flight SQL server are out of scope): read pipelines with skipprd query or skipprd df\n',
    })
  })

  it('unknown store type', async () => {
    const result = await runCli(['sync', '-p', 'bikehire', '--once', '--store-type', 'dynamo'], {
      cwd: p.dir,
    })
    expect(result).toMatchObject({
      code: 1,
      stderr:
        "[skippr] config failed: unknown store type 'dynamo': expected sled or dynamodb (set --store-type or SKIPPR_STORE_TYPE)\n",
    })
  })

  it('unknown pipeline and missing config', async () => {
    const unknown = await runCli(['sync', '-p', 'nope', '--once'], { cwd: p.dir })
    expect(unknown).toMatchObject({
      code: 1,
      stderr: "[skippr] config failed: Pipeline 'nope' not found in skippr.yml: pipelines in it: bikehire\n",
    })
    const missing = await runCli(['sync', '--once', '--config', 'other.yml'], { cwd: p.dir })
    expect(missing).toMatchObject({
      code: 1,
      stderr:
        '[skippr] config failed: other.yml: no such config file: create skippr.yml there or pass --config <path>\n',
    })
  })

  it('writes the failure to logs/skipprd.<date>.log too', async () => {
    await sync({ WAL_STORAGE: 'tape' })
    const logs = await p.logs()
    expect(logs).toContain('"msg":"sync failed"')
    expect(logs).toContain('WAL_STORAGE=tape is not a WAL backend')
  })
})

describe('secrets', () => {
  it('masks secret values in logs, events and errors, whatever the connector does with them', async () => {
    // A connector that misbehaves: it logs its secret and puts it in an error message.
    const pkg = `${p.dir}/node_modules/@skippr/source-leaky`
    await import('node:fs/promises').then((fs) => fs.mkdir(pkg, { recursive: true }))
    await p.write(
      'node_modules/@skippr/source-leaky/package.json',
      '{"name":"@skippr/source-leaky","type":"module","exports":"./index.js"}',
    )
    await p.write(
      'node_modules/@skippr/source-leaky/index.js',
      `export const source = {
        kind: 'source', type: 'Leaky', secretFields: ['token'],
        config: { '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value }) } },
        create: (config, context) => {
          context.logger.info('connecting', { token: config.token, url: 'https://bot:' + config.token + '@api.example/v1' })
          return {
            discover: async () => [{ namespace: 'events', fields: [{ name: 'id', type: 'long' }] }],
            read: async function* () { throw new Error('401: token ' + config.token + ' was revoked') },
            close: async () => {},
          }
        },
      }\n`,
    )
    await p.write(
      'skippr.yml',
      `data_sources:\n  api:\n    Leaky: { token: \${API_TOKEN} }\npipelines:\n  events:\n    data_source: data_sources.api\n`,
    )
    const token = 'tok-5f2d9c1e8a'
    const result = await runCli(['sync', '-p', 'events', '--once', '--output', 'json', '--log', 'debug'], {
      cwd: p.dir,
      env: { API_TOKEN: token },
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      "[skippr] sync failed: pipeline 'events': the source failed: 401: token *** was revoked",
    )
    const logs = await p.logs()
    expect(logs).toContain('"token":"***"')
    expect(logs).toContain('"url":"https://bot:***@api.example/v1"')
    expect(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}')).toMatchObject({
      event: 'sync_error',
      error: expect.stringContaining('token *** was revoked'),
    })
    expect([result.stdout, result.stderr, logs].join('\n')).not.toContain(token)
  })

  it('refuses a secret written in the file without echoing it', async () => {
    await p.write(
      'skippr.yml',
      bikehireConfig({ rows: 10, sink: 'Postgres: { connection_string: "postgres://u:plainpw@h/db" }' }),
    )
    const result = await runCli(['sync', '-p', 'bikehire', '--once'], { cwd: p.dir })
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `[skippr] config failed: skippr.yml: data_sinks.warehouse.Postgres.connection_string: a secret must not be written in the file: put it in .env as WAREHOUSE_CONNECTION_STRING=… and write \${WAREHOUSE_CONNECTION_STRING}\n`,
    )
  })
})

it('reports a bad buffer threshold from the environment', async () => {
  const result = await runCli(['sync', '-p', 'bikehire', '--once'], {
    cwd: p.dir,
    env: { BUFFER_THRESHOLD_BYTES: 'lots' },
  })
  expect(result).toMatchObject({
    code: 1,
    stderr:
      "[skippr] config failed: BUFFER_THRESHOLD_BYTES must be a whole number of bytes from 1 to 4294967295, got 'lots'\n",
  })
})
