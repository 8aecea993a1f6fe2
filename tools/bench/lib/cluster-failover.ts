/**
 * Failover of `WAL_STORAGE=clustered` through the built CLI: three `skipprd sync` nodes of one pipeline
 * (each its own DATA_DIR and peer port, the state in DynamoDB on dynalite, landing into a fresh
 * PostgreSQL schema), as apps/skipprd/test/sync-clustered.test.ts runs them. The CSV source grows all
 * along; once batches land, the leader is SIGKILLed, and the time from the kill to the next batch in
 * the destination's batch ledger is the failover time. Every run is checked: every row written lands
 * exactly once.
 *
 * On one host a waiter takes over a lease whose holder's process is gone at once (the state store's
 * `isLocalOwnerGone`); a node on another host waits for the lease TTL. `ownHosts` gives each node a
 * host name of its own (a UTS namespace, `unshare --uts`, which needs root), as on separate hosts.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePorts } from '@skippr/test-servers'
import type { DynaliteProcess } from './dynalite-process.js'
import { freshSchema, PG_URL } from './postgres.js'
import { defaultsEnv, skipprdCli } from './skipprd.js'

const STEP = 300
const GROW_MS = 150
const POLL_MS = 25
const WAIT_MS = 60_000
const SECRET = 'bench-cluster-secret'

export interface Failover {
  /** SIGKILL of the leader to the next batch in the ledger. */
  readonly ms: number
  readonly rows: number
}

export interface FailoverOptions {
  readonly leaseTtlSeconds: number
  /** Each node under a host name of its own, so the lease is taken over only after its TTL. */
  readonly ownHosts: boolean
}

interface SyncNode {
  readonly name: string
  readonly child: ChildProcess
  stderr: string
}

export async function measureFailover(
  root: string,
  dynalite: DynaliteProcess,
  options: FailoverOptions,
): Promise<Failover> {
  const dir = await mkdtemp(path.join(root, 'failover-'))
  const schema = await freshSchema('bench_cluster')
  const [a, b, c] = await freePorts(3)
  const ports: Record<string, number> = { a: a!, b: b!, c: c! }
  await writeFile(path.join(dir, 'skippr.yml'), config(schema.name, path.basename(dir)))
  await writeFile(path.join(dir, 'events.csv'), `id,body\n${rows(0, STEP)}`)
  const nodes = Object.keys(ports).map((name) => startNode(dir, name, ports, dynalite, options))
  let written = STEP
  let growing = true
  const grower = (async () => {
    while (growing) {
      await sleep(GROW_MS)
      await appendFile(path.join(dir, 'events.csv'), rows(written, written + STEP))
      written += STEP
    }
  })()
  // Batches whose landing transaction began after `since` (landed_at is its now(), on this host's
  // clock): one the dead leader had in flight began before the kill, so it never counts.
  const landedSince = async (since: Date) =>
    Number(
      (
        await schema.client
          .query<{ n: string }>(
            `SELECT count(*) AS n FROM "${schema.name}"._skippr_batches WHERE landed_at > $1`,
            [since],
          )
          .catch(() => ({ rows: [{ n: '0' }] }))
      ).rows[0]!.n,
    )
  try {
    const start = new Date(0)
    await until(async () => (await landedSince(start)) > 0 && nodes.some(leads), 'a first batch landed')
    const leader = nodes.find(leads)!
    const killedAt = new Date()
    const killed = performance.now()
    leader.child.kill('SIGKILL')
    await until(async () => (await landedSince(killedAt)) > 0, 'a batch landed after the kill')
    const ms = performance.now() - killed
    growing = false
    await grower
    const all = written
    await until(async () => {
      const { rows: got, unique } = await landed(schema.client, schema.name)
      if (got > unique) throw new Error(`failover: ${got - unique} rows landed twice`)
      return got === all
    }, `all ${all} rows landed`)
    return { ms, rows: all }
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\n${nodes.map((n) => `${n.name}: ${n.stderr.slice(-600)}`).join('\n')}`,
    )
  } finally {
    growing = false
    await grower
    for (const node of nodes)
      if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL')
    await Promise.all(
      nodes.map((node) =>
        node.child.exitCode === null && node.child.signalCode === null ? once(node.child, 'exit') : undefined,
      ),
    )
    await schema.drop()
    await rm(dir, { recursive: true, force: true })
  }
}

const leads = (node: SyncNode) => node.stderr.includes('writer lease acquired')

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + WAIT_MS
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`failover: not within ${WAIT_MS / 1000} s: ${what}`)
    await sleep(POLL_MS)
  }
}

async function landed(
  client: { query: <R>(sql: string) => Promise<{ rows: R[] }> },
  schema: string,
): Promise<{ rows: number; unique: number }> {
  const { rows: result } = await client.query<{ rows: string; unique: string }>(
    `SELECT count(*) AS rows, count(DISTINCT id) AS unique FROM "${schema}".events`,
  )
  return { rows: Number(result[0]!.rows), unique: Number(result[0]!.unique) }
}

function config(schema: string, store: string): string {
  return [
    'skippr:',
    `  store: { type: dynamodb, name: skippr-${store}, create: true }`,
    'data_sources:',
    '  events: { File: { path: events.csv, format: csv, settle_seconds: 0 } }',
    `data_sinks: { warehouse: { Postgres: { connection_string: "\${BENCH_PG_URL}", schema: ${schema} } } }`,
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

function startNode(
  dir: string,
  name: string,
  ports: Record<string, number>,
  dynalite: DynaliteProcess,
  { leaseTtlSeconds, ownHosts }: FailoverOptions,
): SyncNode {
  const others = Object.entries(ports).filter(([other]) => other !== name)
  const env = defaultsEnv({
    BENCH_PG_URL: PG_URL,
    DATA_DIR: path.join(dir, `host-${name}`),
    WAL_STORAGE: 'clustered',
    SKIPPR_CLUSTER_LISTEN: `127.0.0.1:${ports[name]}`,
    SKIPPR_CLUSTER_NODE_ID: name,
    SKIPPR_CLUSTER_PEERS: others.map(([other, port]) => `${other}=127.0.0.1:${port}`).join(','),
    SKIPPR_CLUSTER_SECRET: SECRET,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
    SKIPPR_LEASE_TTL_SECONDS: String(leaseTtlSeconds),
    SKIPPR_LEASE_WAIT_SECONDS: '600',
    SKIPPR_RETRY_BUDGET_SECONDS: '600',
  })
  const sync = [
    process.execPath,
    skipprdCli(),
    'sync',
    '--pipeline',
    'events',
    '--log',
    'info',
    '--output',
    'json',
  ]
  // `exec` twice (unshare without --fork, then sh): the child's pid is the node's, which SIGKILL hits.
  const [file, ...args] = ownHosts
    ? ['unshare', '--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', `bench-node-${name}`, ...sync]
    : sync
  const child = spawn(file!, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] })
  const node: SyncNode = { name, child, stderr: '' }
  child.stderr!.on('data', (chunk: Buffer) => {
    node.stderr += chunk.toString()
  })
  return node
}
