/**
 * The HttpServer source under load (issue 25, Speed): 1 KiB JSON-lines requests from autocannon
 * (`--connections`, default 64, for `--seconds` each), answered only after the WAL commit holding
 * them (`skipprd sync` with an HttpServer source, no destination, the default 20 ms commit window),
 * beside the raw limit in the same round: a bare node:http server (lib/http-fsync-server.mjs) that
 * answers each request once its body is durable, grouping requests the same way (a 20 ms window,
 * one writev and fdatasync per group, one group at a time). Target: skipprd ≥ 0.8× the bare
 * server's requests/s. p50 and p99 latency and each server's CPU time per request beside.
 *
 * (b) Backpressure, after the rounds: the same load for `--backpressure-seconds` (default 60; 0
 * leaves it out) against skipprd whose WAL is capped at 32 MiB with no destination, so nothing
 * lands: the WAL fills, reading waits, and the source must answer 429 rather than hold requests.
 * Target: 429s given, and skipprd's peak RSS ≤ 300 MB.
 *
 * Both servers are child processes and the load comes from this process, so the three share the
 * machine's cores alike. After each run its answers are checked: every request 200, and skipprd's
 * WAL holding 8 rows for each (counted with `skipprd query`), the bare server's file every body
 * (each may also hold the requests still in flight when the load stopped, one per connection).
 * In each round the two sides take turns going first (lib/rounds.ts); the median of the rounds'
 * ratios counts, with their range.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench http-push [--seconds N] [--connections N] [--rounds N]
 * Env:  SKIPPR_BENCH_DIR      where the temporary data goes (default: the OS temp dir)
 *       SKIPPR_BENCH_PROFILE  1: run skipprd under `node --cpu-prof` and print its top functions
 *                             (slows it down: the ratios are then not the benchmark's)
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { freePorts } from '@skippr/test-servers'
import autocannon from 'autocannon'
import { exited, untilListening } from './lib/child-server.js'
import { topSelfTimes } from './lib/cpu-profile.js'
import { committedRows, freshSchema, PG_URL } from './lib/postgres.js'
import { machineLine, median, ratioCell, table, verdict } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { cpuMsOf, peakRssMbOf } from './lib/server-cpu.js'
import { defaultsEnv, skipprdCli } from './lib/skipprd.js'

const TARGET = 0.8
const RSS_TARGET_MB = 300
/** The WAL cap of (b): the least skipprd takes (two WAL files), so it fills within seconds. */
const WAL_MAX_BYTES = 32 * 1024 * 1024
const COMMIT_WINDOW_MS = 20
const ROWS_PER_REQUEST = 8
/** Eight JSON lines of 128 bytes: a 1 KiB body. */
const BODY = Array.from({ length: ROWS_PER_REQUEST }, (_, i) => {
  const line = `{"id":${i},"kind":"click","user":"u-000${i}","score":${i}.5,"note":"`
  return `${line}${'x'.repeat(125 - line.length)}"}\n`
}).join('')

const { seconds, connections, rounds, backpressureSeconds } = commandLine()
const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-http-'))
const profileDir = process.env.SKIPPR_BENCH_PROFILE === '1' ? path.join(dir, 'profile') : undefined
const bareScript = fileURLToPath(new URL('lib/http-fsync-server.mjs', import.meta.url))

function commandLine(): {
  seconds: number
  connections: number
  rounds: number
  backpressureSeconds: number
} {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: {
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '64' },
      rounds: { type: 'string', default: '5' },
      'backpressure-seconds': { type: 'string', default: '60' },
    },
  })
  const parsed = {
    seconds: Number(values.seconds),
    connections: Number(values.connections),
    rounds: Number(values.rounds),
  }
  const backpressureSeconds = Number(values['backpressure-seconds'])
  if (!Number.isSafeInteger(backpressureSeconds) || backpressureSeconds < 0)
    throw new Error('--backpressure-seconds must be an integer ≥ 0 (0 leaves part (b) out)')
  for (const [name, value] of Object.entries(parsed))
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be an integer ≥ 1`)
  return { ...parsed, backpressureSeconds }
}

interface Run {
  /** Requests answered 200. */
  readonly requests: number
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly serverCpuMs: number
  /** Requests answered 429 (only the backpressure part takes any). */
  readonly refused: number
  /** Requests given up after 5 s (only in the backpressure part: taken, waiting for the destination). */
  readonly timedOut: number
  /** The server's peak RSS (VmHWM), MB. */
  readonly peakRssMb: number
}

/**
 * `duration` seconds of load against `port`, with the server's CPU time meanwhile. Every answer must
 * be a 200, or with `refusals` a 200 or a 429 (Retry-After: the backpressure the server asks for).
 */
async function load(
  port: number,
  pid: number,
  label: string,
  options: { duration: number; refusals: boolean },
): Promise<Run> {
  const before = await cpuMsOf(pid)
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/`,
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson' },
    body: BODY,
    connections,
    duration: options.duration,
    // Past the cap, requests taken before the WAL filled wait for the destination: give up on them.
    ...(options.refusals && { timeout: 5 }),
  })
  const serverCpuMs = (await cpuMsOf(pid)) - before
  const refused = options.refusals ? (result.statusCodeStats?.['429']?.count ?? 0) : 0
  const timedOut = options.refusals ? result.timeouts : 0
  if (result.non2xx > refused || result.errors > timedOut || result.timeouts > timedOut)
    throw new Error(
      `${label}: ${result.non2xx} answers not 2xx (${refused} of them 429), ${result.errors} errors, ${result.timeouts} timeouts`,
    )
  return {
    requests: result['2xx'],
    perSecond: result['2xx'] / (result.duration || options.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    serverCpuMs,
    refused,
    timedOut,
    peakRssMb: await peakRssMbOf(pid),
  }
}

/** The first JSON line of `child`'s stdout that has `key`. */
async function lineWith(child: ChildProcess, key: string): Promise<Record<string, unknown>> {
  for await (const line of createInterface({ input: child.stdout! })) {
    const parsed = (() => {
      try {
        return JSON.parse(line) as Record<string, unknown>
      } catch {
        return undefined
      }
    })()
    if (parsed && key in parsed) return parsed
  }
  throw new Error(`the process ended without printing ${key}`)
}

/** skippr.yml of a run: the HttpServer source on `port`, and `sink` (lines of data_sinks) when given. */
function projectConfig(port: number, dataDir: string, sink?: readonly string[]): string {
  return [
    'data_sources:',
    '  push:',
    `    HttpServer: { listen: "127.0.0.1:${port}", format: jsonl, namespace: events, commit_interval_ms: ${COMMIT_WINDOW_MS} }`,
    ...(sink ? ['data_sinks:', ...sink] : []),
    'pipelines:',
    '  push:',
    '    data_source: data_sources.push',
    ...(sink ? ['    data_sink: data_sinks.out'] : []),
    `    data_dir: ${dataDir}`,
    '',
  ].join('\n')
}

interface Server {
  readonly port: number
  readonly child: ChildProcess
  /** SIGTERM, then the exit, which must be 0. */
  stop(): Promise<void>
}

async function startSkipprd(
  config: string,
  port: number,
  env: NodeJS.ProcessEnv,
  profile: boolean,
): Promise<Server> {
  const cpuProfile = profile && profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
  const child = spawn(
    process.execPath,
    [...cpuProfile, skipprdCli(), 'sync', '--config', config, '-p', 'push', '--output', 'json'],
    { env, stdio: ['ignore', 'ignore', 'inherit'] },
  )
  const ended = exited(child)
  await untilListening(port, child)
  return {
    port,
    child,
    async stop() {
      child.kill('SIGTERM')
      if ((await ended) !== 0) throw new Error('skipprd did not exit 0 after SIGTERM')
    },
  }
}

/** skipprd with an HttpServer source and no destination, under the rounds' load. */
async function skipprdRun(round: number): Promise<Run> {
  const project = path.join(dir, `skipprd-${round}`)
  const [port] = (await freePorts(1)) as [number]
  const config = path.join(dir, `skipprd-${round}.yml`)
  await writeFile(config, projectConfig(port, project))
  const server = await startSkipprd(config, port, defaultsEnv(), true)
  const run = await load(port, server.child.pid!, 'skipprd', { duration: seconds, refusals: false })
  await server.stop()
  const counted = await countRows(config)
  if (!inFlightAtMost(counted / ROWS_PER_REQUEST, run.requests))
    throw new Error(
      `skipprd's WAL holds ${counted} rows for ${run.requests} answered requests of ${ROWS_PER_REQUEST}`,
    )
  await rm(project, { recursive: true, force: true })
  return run
}

/**
 * (b): skipprd into PostgreSQL whose table a transaction of the bench holds locked for the whole
 * load, its WAL capped at WAL_MAX_BYTES: nothing lands, the WAL fills, reading waits, and the
 * source must answer 429 rather than hold the requests. Then the lock goes, and every answered
 * request must land.
 */
async function backpressureRun(): Promise<Run> {
  const schema = await freshSchema('bench_http')
  const project = path.join(dir, 'backpressure')
  const [port] = (await freePorts(1)) as [number]
  const config = path.join(dir, 'backpressure.yml')
  const sink = ['  out:', `    Postgres: { connection_string: "\${BENCH_PG_URL}", schema: ${schema.name} }`]
  await writeFile(config, projectConfig(port, project, sink))
  const env = defaultsEnv({ BENCH_PG_URL: PG_URL, WAL_MAX_TOTAL_BYTES: String(WAL_MAX_BYTES) })
  const server = await startSkipprd(config, port, env, false)
  const table = `"${schema.name}".events`
  try {
    // One request first, so the sink has made its table; then it is locked until the load ends.
    const first = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: BODY })
    if (first.status !== 200) throw new Error(`the first request was answered ${first.status}`)
    while ((await committedRows(schema.client, table)) < ROWS_PER_REQUEST) await sleep(20)
    await schema.client.query('BEGIN')
    await schema.client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`)
    const run = await load(port, server.child.pid!, 'skipprd', {
      duration: backpressureSeconds,
      refusals: true,
    })
    await schema.client.query('ROLLBACK')
    const answered = run.requests + 1
    const deadline = Date.now() + 120_000
    while ((await committedRows(schema.client, table)) < answered * ROWS_PER_REQUEST && Date.now() < deadline)
      await sleep(100)
    const landed = (await committedRows(schema.client, table)) / ROWS_PER_REQUEST
    // Requests given up on by the client were taken all the same, and land too.
    if (!Number.isInteger(landed) || landed < answered || landed > answered + run.timedOut + connections)
      throw new Error(
        `PostgreSQL holds ${landed} requests' rows for ${answered} answered 200 and ${run.timedOut} given up on`,
      )
    return run
  } finally {
    await server.stop()
    await schema.drop()
    await rm(project, { recursive: true, force: true })
  }
}

/** Rows of push.events in the WAL, as `skipprd query` counts them. */
async function countRows(config: string): Promise<number> {
  const child = spawn(
    process.execPath,
    [skipprdCli(), 'query', '--config', config, '--plain', '--sql', 'SELECT count(*) FROM push.events'],
    { env: defaultsEnv(), stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const answer = await lineWith(child, 'rows')
  await exited(child)
  return Number((answer.rows as string[][])[0]![0])
}

async function bareRun(round: number): Promise<Run> {
  const file = path.join(dir, `bare-${round}.log`)
  const child = spawn(process.execPath, [bareScript, file, String(COMMIT_WINDOW_MS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const ended = exited(child)
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const { port } = JSON.parse((await lines.next()).value as string) as { port: number }
  const run = await load(port, child.pid!, 'the bare server', { duration: seconds, refusals: false })
  child.kill('SIGTERM')
  const { requests } = JSON.parse((await lines.next()).value as string) as { requests: number }
  await ended
  // The file may also hold a group written when SIGTERM came, before its answers were counted.
  const bodies = (await stat(file)).size / BODY.length
  if (!inFlightAtMost(requests, run.requests) || !inFlightAtMost(bodies, run.requests))
    throw new Error(
      `the bare server answered ${requests} requests and wrote ${bodies} bodies for ${run.requests} answered`,
    )
  await rm(file, { force: true })
  return run
}

/**
 * Whether `stored` requests account for the `answered` ones: autocannon stops counting at the end of
 * its duration with one request in flight per connection, which the server may still have stored.
 */
function inFlightAtMost(stored: number, answered: number): boolean {
  return Number.isInteger(stored) && stored >= answered && stored <= answered + connections
}

const ms = (value: number) => `${value.toFixed(1)} ms`
const perRequest = (run: Run) => `${((run.serverCpuMs * 1000) / run.requests).toFixed(0)} µs CPU/request`

try {
  console.log(machineLine('skipprd HttpServer bench'))
  const results: { skipprd: Run; bare: Run }[] = []
  for (let round = 0; round < rounds; round++) {
    results.push(
      await inRotation(round, {
        skipprd: () => skipprdRun(round),
        bare: () => bareRun(round),
      }),
    )
    console.log(`round ${round + 1} of ${rounds} done`)
  }
  const ratios = results.map((r) => r.skipprd.perSecond / r.bare.perSecond)
  const mid = (pick: (r: { skipprd: Run; bare: Run }) => number) => median(results.map(pick))
  const met = median(ratios) >= TARGET
  console.log(
    `\n${table([
      ['side', 'requests/s', 'p50', 'p99', 'server CPU', 'ratio', 'target', 'met'],
      [
        'skipprd sync, HttpServer, answer after commit',
        Math.round(mid((r) => r.skipprd.perSecond)).toLocaleString('en'),
        ms(mid((r) => r.skipprd.p50)),
        ms(mid((r) => r.skipprd.p99)),
        perRequest(results[0]!.skipprd),
        ratioCell(ratios),
        `≥ ${TARGET}×`,
        verdict(met),
      ],
      [
        'bare node:http, fdatasync per group',
        Math.round(mid((r) => r.bare.perSecond)).toLocaleString('en'),
        ms(mid((r) => r.bare.p50)),
        ms(mid((r) => r.bare.p99)),
        perRequest(results[0]!.bare),
        '',
        '',
        '',
      ],
    ])}`,
  )
  console.log(
    `\nMedians of ${rounds} rounds of ${seconds} s, ${connections} connections, ${BODY.length}-byte bodies of ${ROWS_PER_REQUEST} JSON lines, a ${COMMIT_WINDOW_MS} ms commit window. Server CPU per request is of round 1.`,
  )
  if (backpressureSeconds > 0) {
    const held = await backpressureRun()
    console.log(
      `\n${table([
        ['(b) backpressure', '200', '429', 'waiting > 5 s', 'peak RSS', 'target', 'met'],
        [
          `into PostgreSQL, its table locked, WAL capped at 32 MiB, ${backpressureSeconds} s of load`,
          held.requests.toLocaleString('en'),
          held.refused.toLocaleString('en'),
          held.timedOut.toLocaleString('en'),
          `${held.peakRssMb.toFixed(0)} MB`,
          `429s, ≤ ${RSS_TARGET_MB} MB`,
          verdict(held.refused > 0 && held.peakRssMb <= RSS_TARGET_MB),
        ],
      ])}`,
    )
    if (held.refused === 0 || held.peakRssMb > RSS_TARGET_MB) process.exitCode = 1
  }
  if (profileDir) {
    console.log("\nskipprd's self time under the profiler:")
    for (const { name, share } of await topSelfTimes(profileDir, 25))
      console.log(`${(share * 100).toFixed(1).padStart(7)}%  ${name}`)
  }
  console.log(machineLine('done'))
  if (!met) process.exitCode = 1
} finally {
  await rm(dir, { recursive: true, force: true })
}
