/**
 * WAL_STORAGE=clustered through the real CLI: three `skipprd sync` nodes of one pipeline on this host,
 * each its own DATA_DIR and peer port, sharing the state in DynamoDB (dynalite) and landing into one
 * PostgreSQL schema. The source, a CSV file, grows while they run; the leader is SIGKILLed mid-run and
 * a member of its in-sync set takes the lease and continues from its copy of the WAL: every row
 * lands exactly once. What the mode cannot do is refused with one line.
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { type DynaliteServer, freePorts, startDynalite } from '@skippr/test-servers'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { exited, runCli, spawnCli } from './support/cli.js'
import { PG_URL, pgSchemaPerTest, postgresSink } from './support/file-sync.js'
import { type Project, project } from './support/project.js'

const ROWS = 12_000
const STEP = 300
const SECRET = `s-${randomBytes(8).toString('hex')}`

const schema = pgSchemaPerTest('clustered')
let dynamo: DynaliteServer
let p: Project
beforeAll(async () => {
  dynamo = await startDynalite()
  p = await project()
})
afterAll(async () => {
  await dynamo?.stop()
  await p?.remove()
})

function config(sink = postgresSink(schema.name()), shared = true): string {
  return [
    ...(shared
      ? [
          'skippr:',
          `  store: { type: dynamodb, name: skippr-clustered-${randomBytes(4).toString('hex')}, create: true }`,
        ]
      : []),
    'data_sources:',
    '  events: { File: { path: events.csv, format: csv, settle_seconds: 0 } }',
    `data_sinks: { warehouse: { ${sink} } }`,
    'pipelines:',
    '  events:',
    '    data_source: data_sources.events',
    '    data_sink: data_sinks.warehouse',
    '    buffer_threshold_bytes: 8192',
    '    buffer_threshold_seconds: 1',
    '',
  ].join('\n')
}

function rows(from: number, to: number): string {
  let text = ''
  for (let id = from; id < to; id++) text += `${id},row-${id}\n`
  return text
}

interface Node {
  readonly name: string
  readonly child: ChildProcess
  stderr: string
}

function clusterEnv(name: string, ports: Record<string, number>): Record<string, string> {
  const others = Object.entries(ports).filter(([other]) => other !== name)
  return {
    WAREHOUSE_URL: PG_URL,
    DATA_DIR: path.join(p.dir, `host-${name}`),
    WAL_STORAGE: 'clustered',
    SKIPPR_CLUSTER_LISTEN: `127.0.0.1:${ports[name]}`,
    SKIPPR_CLUSTER_NODE_ID: name,
    SKIPPR_CLUSTER_PEERS: others.map(([other, port]) => `${other}=127.0.0.1:${port}`).join(','),
    SKIPPR_CLUSTER_SECRET: SECRET,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    SKIPPR_LEASE_TTL_SECONDS: '2',
    SKIPPR_LEASE_WAIT_SECONDS: '600',
    SKIPPR_RETRY_BUDGET_SECONDS: '600',
  }
}

function startNode(name: string, ports: Record<string, number>): Node {
  const child = spawnCli(['sync', '--pipeline', 'events', '--log', 'info', '--output', 'json'], {
    cwd: p.dir,
    env: clusterEnv(name, ports),
  })
  const node: Node = { name, child, stderr: '' }
  child.stderr?.on('data', (chunk: Buffer) => {
    node.stderr += chunk.toString()
  })
  child.stdout?.resume()
  return node
}

const leads = (node: Node) => node.stderr.includes('writer lease acquired')

async function landed(): Promise<{ rows: number; unique: number }> {
  const result = await schema.admin
    .query<{ rows: string; unique: string }>(
      `SELECT count(*) AS rows, count(DISTINCT id) AS unique FROM "${schema.name()}".events`,
    )
    .catch(() => ({ rows: [{ rows: '0', unique: '0' }] }))
  const [row] = result.rows
  return { rows: Number(row?.rows ?? 0), unique: Number(row?.unique ?? 0) }
}

/** The sink's batch ledger: how many WAL epochs landed, the first seq, and seqs missing up to the last. */
async function ledger(): Promise<{ epochs: number; first: number; gaps: number }> {
  const { rows } = await schema.admin.query<{ epochs: string; first: string; gaps: string }>(
    `SELECT count(DISTINCT epoch) AS epochs, min(seq) AS first, max(seq) - min(seq) + 1 - count(*) AS gaps
       FROM "${schema.name()}"._skippr_batches`,
  )
  const [row] = rows
  return { epochs: Number(row?.epochs), first: Number(row?.first), gaps: Number(row?.gaps) }
}

/** Rows pending in a node's own log, read by `skipprd query` in its environment. */
async function pending(name: string, ports: Record<string, number>): Promise<number> {
  const query = await runCli(['query', '--plain', '-s', 'SELECT count(*) AS pending FROM events.events'], {
    cwd: p.dir,
    env: clusterEnv(name, ports),
  })
  expect(query.stderr, name).toBe('')
  return Number((JSON.parse(query.stdout) as { rows: string[][] }).rows[0]?.[0])
}

it('three nodes, the leader SIGKILLed mid-run: a member takes over and every row lands once', async () => {
  await p.write('skippr.yml', config())
  await p.write('events.csv', `id,body\n${rows(0, STEP)}`)
  const [a, b, c] = await freePorts(3)
  const ports = { a: a!, b: b!, c: c! }
  const nodes = Object.keys(ports).map((name) => startNode(name, ports))
  let written = STEP
  // The file grows all along, before and after the kill.
  const growing = (async () => {
    while (written < ROWS) {
      await sleep(150)
      await appendFile(path.join(p.dir, 'events.csv'), rows(written, written + STEP))
      written += STEP
    }
  })()
  const lock = new pg.Client({ connectionString: PG_URL })
  await lock.connect()
  try {
    await expect
      .poll(async () => (await landed()).rows, { timeout: 30_000, interval: 100 })
      .toBeGreaterThan(0)
    const leader = nodes.find(leads)
    expect(leader, nodes.map((n) => `${n.name}: ${n.stderr.slice(-400)}`).join('\n')).toBeDefined()
    // Landing is held up (the table locked) while commits go on: the leader dies with committed
    // batches that did not land, which every node's log holds (query reads each beside its sync).
    await lock.query('BEGIN')
    await lock.query(`LOCK TABLE "${schema.name()}".events IN ACCESS EXCLUSIVE MODE`)
    await expect
      .poll(async () => Math.min(...(await Promise.all(nodes.map((node) => pending(node.name, ports))))), {
        timeout: 30_000,
        interval: 0,
      })
      .toBeGreaterThan(0)
    leader!.child.kill('SIGKILL')
    await exited(leader!.child)
    const writtenAtKill = written
    await lock.query('COMMIT')
    const rest = nodes.filter((n) => n !== leader)

    await expect.poll(() => rest.some(leads), { timeout: 30_000, interval: 200 }).toBe(true)
    await growing
    await expect.poll(landed, { timeout: 45_000, interval: 500 }).toEqual({ rows: ROWS, unique: ROWS })
    expect(writtenAtKill).toBeLessThan(ROWS)
    // The new leader continued the dead one's log: one epoch, every FSN from the first landed once.
    expect(await ledger()).toEqual({ epochs: 1, first: 1, gaps: 0 })
    for (const node of rest) expect(await pending(node.name, ports)).toBe(0)
    // Nothing more arrives late (a batch landed twice would show up here).
    await sleep(2_000)
    expect(await landed()).toEqual({ rows: ROWS, unique: ROWS })
    expect(rest.map((n) => n.stderr).join('')).not.toContain(SECRET)
  } finally {
    await lock.end()
    written = ROWS
    await growing
    for (const node of nodes) node.child.kill('SIGKILL')
    await Promise.all(nodes.map((node) => exited(node.child)))
  }
}, 90_000)

it('refuses, with one line each, what clustered storage cannot do', async () => {
  const [port, peer] = await freePorts(2)
  const env = clusterEnv('a', { a: port!, b: peer! })
  const refused = async (args: string[], extra: Record<string, string | undefined> = {}) => {
    const run = await runCli(['sync', ...args], {
      cwd: p.dir,
      env: { ...env, ...extra },
    })
    expect(run.code).toBe(1)
    return run.stderr.trim()
  }
  await p.write('skippr.yml', config())
  expect(await refused(['--pipeline', 'events', '--once'])).toMatch(
    /^.*WAL_STORAGE=clustered does not support sync --once.*$/,
  )
  expect(await refused(['--pipeline', 'events'], { SKIPPR_CLUSTER_LISTEN: undefined })).toMatch(
    /^.*WAL_STORAGE=clustered needs SKIPPR_CLUSTER_LISTEN.*$/,
  )
  expect(await refused(['--pipeline', 'events'], { SKIPPR_CLUSTER_PEERS: 'b=nowhere' })).toMatch(
    /^.*SKIPPR_CLUSTER_PEERS: nowhere is not host:port.*$/,
  )
  expect(await refused(['--pipeline', 'events'], { SKIPPR_CLUSTER_SECRET: '' })).toMatch(
    /^.*needs SKIPPR_CLUSTER_SECRET.*$/,
  )
  expect(await refused([])).toMatch(/^.*WAL_STORAGE=clustered runs one pipeline per sync: pass --pipeline.*$/)
  await p.write('skippr.yml', config(undefined, false))
  expect(await refused(['--pipeline', 'events'])).toMatch(
    /^.*WAL_STORAGE=clustered needs a state store every node shares.*$/,
  )
  await p.write('skippr.yml', config('Stdout: {}'))
  expect(await refused(['--pipeline', 'events'])).toMatch(
    /^.*WAL_STORAGE=clustered accepts only destinations.*\(Stdout\).*$/,
  )
}, 60_000)
