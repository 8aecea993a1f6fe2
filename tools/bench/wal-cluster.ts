/**
 * @skippr/wal-cluster benchmark (issue 24's speed part): `openWal` on the clustered backend with two
 * peers, each in a child process of its own on loopback (as a peer on another host), beside the disk
 * WAL alone (`openWal` + `diskWal`, the raw limit) in the same run, in interleaved rounds:
 *
 *  (1) throughput: N commits of one 10 MB part each, MB/s clustered vs disk alone. Target ≥ 0.7×.
 *  (2) latency: 1 MB commits one after another, p50 / p99 per commit, clustered vs disk alone.
 *  (3) failover: three `skipprd sync` nodes (lib/cluster-failover.ts), the leader SIGKILLed; the time
 *      to the next batch landed in PostgreSQL. Target ≤ the lease TTL + 5 s.
 *
 * Every clustered run is checked: each peer's copy (readPeerCopy) holds every frame of the leader's
 * log at the same FSN with the same bytes, and every committed batch's FSN is among them.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench wal-cluster
 * Env:  SKIPPR_BENCH_CLUSTER_ROUNDS    rounds (default 5)
 *       SKIPPR_BENCH_CLUSTER_BATCHES   10 MB commits per side per round in (1) (default 10)
 *       SKIPPR_BENCH_CLUSTER_COMMITS   1 MB commits per side per round in (2) (default 100)
 *       SKIPPR_BENCH_CLUSTER_FAILOVERS failovers in (3) (default 5)
 *       SKIPPR_BENCH_CLUSTER_LEASE_TTL SKIPPR_LEASE_TTL_SECONDS of the nodes in (3) (default 2)
 *       SKIPPR_BENCH_CLUSTER_PARTS     which parts to run: `12` (they run together) and `3` (default `123`)
 *       SKIPPR_BENCH_DIR               where the temporary data goes (default: the OS temp dir)
 */
import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { crc32c } from '@node-rs/crc32'
import { LmdbBackend } from '@skippr/state'
import {
  type BatchIdentity,
  type BatchPart,
  type Offset,
  openWal,
  type ResumePositions,
  type WalBackendType,
} from '@skippr/wal'
import { clusteredWal, readPeerCopy } from '@skippr/wal-cluster'
import { type Failover, measureFailover } from './lib/cluster-failover.js'
import { startDynaliteProcess } from './lib/dynalite-process.js'
import { machineLine, median, ratioCell, table } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { cpuMsOf } from './lib/server-cpu.js'
import { startWalPeerProcess, type WalPeerProcess } from './lib/wal-peer-process.js'

const MB = 1_000_000
/** WAL_BYTES_PER_FILE's default; both sides use it. */
const FILE_BYTES = 10 * 1024 * 1024
const SECRET = 'bench-secret'
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)
const ROUNDS = env('SKIPPR_BENCH_CLUSTER_ROUNDS', 5)
const BATCHES = env('SKIPPR_BENCH_CLUSTER_BATCHES', 10)
const COMMITS = env('SKIPPR_BENCH_CLUSTER_COMMITS', 100)
const FAILOVERS = env('SKIPPR_BENCH_CLUSTER_FAILOVERS', 5)
const LEASE_TTL_SECONDS = env('SKIPPR_BENCH_CLUSTER_LEASE_TTL', 2)
const PARTS = process.env.SKIPPR_BENCH_CLUSTER_PARTS ?? '123'

/** One side's run: each commit's wall time, and the CPU time of this process and of the peers. */
interface Run {
  readonly commitMs: number[]
  readonly ms: number
  readonly cpuMs: number
  readonly peersCpuMs: number
}

interface Cluster {
  readonly peers: WalPeerProcess[]
  readonly store: LmdbBackend
}

async function main(root: string): Promise<void> {
  console.log(machineLine('@skippr/wal-cluster bench'))
  if (PARTS.includes('1') || PARTS.includes('2')) await commits(root)
  if (PARTS.includes('3')) await failovers(root)
  console.log(machineLine('after'))
}

async function commits(root: string): Promise<void> {
  const peers = await Promise.all(
    ['peer-b', 'peer-c'].map(async (name) => {
      const dir = path.join(root, name)
      await fsp.mkdir(dir)
      return startWalPeerProcess(dir, SECRET)
    }),
  )
  const store = LmdbBackend.open(path.join(root, 'state'))
  try {
    await measure(root, { peers, store })
  } finally {
    await Promise.all(peers.map((peer) => peer.stop()))
    await store.close()
  }
}

async function measure(root: string, cluster: Cluster): Promise<void> {
  const big = csvPart(10 * MB)
  const small = csvPart(1 * MB)
  const throughput: Array<{ disk: Run; clustered: Run }> = []
  const latency: Array<{ disk: Run; clustered: Run }> = []
  let run = 0
  const side = (part: BatchPart, commits: number, clustered: boolean) => () =>
    commitRun(root, `bench-${run++}`, part, commits, clustered ? cluster : undefined)
  for (let round = 0; round < ROUNDS; round++) {
    throughput.push(
      await inRotation(round, { disk: side(big, BATCHES, false), clustered: side(big, BATCHES, true) }),
    )
    latency.push(
      await inRotation(round, { disk: side(small, COMMITS, false), clustered: side(small, COMMITS, true) }),
    )
  }
  report(big, small, throughput, latency)
}

/** Commits `commits` batches of `part` into a fresh log; with `cluster`, replicated to its peers and checked. */
async function commitRun(
  root: string,
  pipeline: string,
  part: BatchPart,
  commits: number,
  cluster: Cluster | undefined,
): Promise<Run> {
  const dataDir = path.join(root, pipeline)
  const backend = cluster && clusteredBackend(cluster)
  const wal = await openWal({
    pipeline,
    dataDir,
    bytesPerFile: FILE_BYTES,
    positions: memoryPositions(),
    backend,
  })
  const ids: BatchIdentity[] = []
  const commitMs: number[] = []
  const peersCpu = cluster ? await peersCpuTime(cluster) : 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  try {
    for (let i = 0; i < commits; i++) {
      const t = performance.now()
      ids.push(await wal.commit({ offset: { batch: i }, parts: [part] }))
      commitMs.push(performance.now() - t)
    }
  } finally {
    await wal.close()
  }
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  const peersCpuMs = cluster ? (await peersCpuTime(cluster)) - peersCpu : 0
  if (cluster) await checkCopies(cluster, dataDir, pipeline, ids)
  await fsp.rm(dataDir, { recursive: true, force: true })
  return { commitMs, ms, cpuMs: (used.user + used.system) / 1000, peersCpuMs }
}

/** A new pipeline per run, so each starts with a fresh in-sync set and fencing token 1. */
function clusteredBackend({ peers, store }: Cluster): WalBackendType {
  return clusteredWal({
    nodeId: 'leader',
    peers: peers.map((peer, i) => ({ nodeId: `peer-${i}`, url: peer.url })),
    secret: SECRET,
    fencingToken: 1n,
    inSync: store,
  })
}

async function peersCpuTime({ peers }: Cluster): Promise<number> {
  const each = await Promise.all(peers.map((peer) => cpuMsOf(peer.pid)))
  return each.reduce((a, b) => a + b, 0)
}

/** Every peer holds every frame of the leader's log, same FSN, same bytes; every commit's FSN is one of them. */
async function checkCopies(
  { peers }: Cluster,
  leaderDir: string,
  pipeline: string,
  ids: readonly BatchIdentity[],
): Promise<void> {
  const leader = await crcsByFsn(leaderDir, pipeline)
  const missing = ids.filter((id) => !leader.has(id.seq))
  if (missing.length > 0)
    throw new Error(`${pipeline}: the leader's log lacks ${missing.length} committed batches`)
  for (const peer of peers) {
    const copy = await crcsByFsn(peer.dataDir, pipeline)
    for (const [fsn, crc] of leader) {
      if (copy.get(fsn) !== crc)
        throw new Error(
          `${pipeline}: peer ${peer.url} lacks the leader's frame at FSN ${fsn} (or has other bytes)`,
        )
    }
  }
}

async function crcsByFsn(dataDir: string, pipeline: string): Promise<Map<bigint, number>> {
  const frames = await readPeerCopy(dataDir, pipeline)
  return new Map(frames.map((frame) => [frame.fsn, crc32c(frame.payload)]))
}

// ---- report ----

function report(
  big: BatchPart,
  small: BatchPart,
  throughput: ReadonlyArray<{ disk: Run; clustered: Run }>,
  latency: ReadonlyArray<{ disk: Run; clustered: Run }>,
): void {
  const mbPerS = (part: BatchPart, r: Run) => (r.commitMs.length * part.body.length) / MB / (r.ms / 1000)
  const mid = <T>(runs: readonly T[], f: (r: T) => number) => median(runs.map(f))
  const cpu = (runs: readonly Run[], own: (r: Run) => number) => `${(mid(runs, own) / 1000).toFixed(2)} s`
  const sideCells = (runs: readonly Run[], part: BatchPart, clustered: boolean) => [
    `${mid(runs, (r) => mbPerS(part, r)).toFixed(1)} MB/s`,
    `${mid(runs, (r) => percentile(r.commitMs, 0.5)).toFixed(1)} / ${mid(runs, (r) => percentile(r.commitMs, 0.99)).toFixed(1)} ms`,
    `CPU ${cpu(runs, (r) => r.cpuMs)}${clustered ? `, peers ${cpu(runs, (r) => r.peersCpuMs)}` : ''}`,
  ]
  const rows: string[][] = [['part, side', 'MB/s', 'commit p50 / p99', 'CPU', 'clustered ÷ disk alone']]
  for (const [name, part, rounds] of [
    [`(1) ${BATCHES} × ${(big.body.length / MB).toFixed(0)} MB`, big, throughput],
    [`(2) ${COMMITS} × ${(small.body.length / MB).toFixed(0)} MB`, small, latency],
  ] as const) {
    const disk = rounds.map((r) => r.disk)
    const clustered = rounds.map((r) => r.clustered)
    const ratio =
      part === big
        ? `${ratioCell(rounds.map((r) => mbPerS(part, r.clustered) / mbPerS(part, r.disk)))} MB/s (target ≥ 0.7×)`
        : `p50 ${ratioCell(rounds.map((r) => percentile(r.clustered.commitMs, 0.5) / percentile(r.disk.commitMs, 0.5)))}, ` +
          `p99 ${ratioCell(rounds.map((r) => percentile(r.clustered.commitMs, 0.99) / percentile(r.disk.commitMs, 0.99)))}`
    rows.push([`${name}, disk WAL alone`, ...sideCells(disk, part, false), ''])
    rows.push([`${name}, clustered (2 peers)`, ...sideCells(clustered, part, true), ratio])
  }
  console.log(`medians of ${ROUNDS} rounds (range of the per-round ratios in brackets); every copy checked`)
  console.log(table(rows))
}

// ---- (3) failover ----

async function failovers(root: string): Promise<void> {
  const dynalite = await startDynaliteProcess()
  const target = LEASE_TTL_SECONDS + 5
  try {
    for (const ownHosts of [false, true]) {
      const runs: Failover[] = []
      for (let round = 0; round < FAILOVERS; round++)
        runs.push(await measureFailover(root, dynalite, { leaseTtlSeconds: LEASE_TTL_SECONDS, ownHosts }))
      const seconds = runs.map((run) => run.ms / 1000)
      console.log(
        `(3) failover, 3 skipprd sync nodes ${ownHosts ? 'under host names of their own' : 'on one host name'}, ` +
          `lease TTL ${LEASE_TTL_SECONDS} s, SIGKILL of the leader to the next landed batch: ` +
          `median ${median(seconds).toFixed(2)} s (${Math.min(...seconds).toFixed(2)}–${Math.max(...seconds).toFixed(2)}) ` +
          `over ${runs.length} runs (target ≤ ${target} s: ${median(seconds) <= target ? 'met' : 'missed'}); ` +
          `every row landed once (${runs.map((run) => run.rows).join(', ')} rows)`,
      )
    }
  } finally {
    await dynalite.stop()
  }
}

/** The nearest-rank percentile. */
function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!
}

// ---- helpers ----

/** One part of a repeated CSV row, about `bytes` long: what is measured is the storage, not the rows. */
function csvPart(bytes: number): BatchPart {
  const row = '1,2,3,4,"2024-01-01T00:00:00Z","2024-01-01T00:10:00Z",600,"member",2.5\n'
  const rows = Math.floor(bytes / row.length)
  return { namespace: 'rentals', schemaVersion: 1, format: 'csv', rows, body: Buffer.from(row.repeat(rows)) }
}

/** The state store's part, kept in memory: the bench measures the WAL. */
function memoryPositions(): ResumePositions {
  let saved: Offset | undefined
  return {
    load: async () => saved,
    save: async (offset) => {
      saved = offset
    },
  }
}

// Last, so every module-level constant above is initialised before the run starts.
const root = await fsp.mkdtemp(
  path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-wal-cluster-'),
)
try {
  await main(root)
} finally {
  await fsp.rm(root, { recursive: true, force: true })
}
