/**
 * The Websocket source end to end (issue 25, Speed): records from an @skippr/sf `Sender` (disk slot,
 * durability=append) through `skipprd sync` with a Websocket source into PostgreSQL, timed from the
 * first send until the destination holds every record, beside the Sender→Receiver throughput alone
 * in the same round (the Sender to lib/sf-receiver.mjs, which only counts frames, timed until the
 * last ack). No target: the ratio says what skipprd's commit, WAL and landing cost beside the wire.
 *
 * The Sender runs in this process, skipprd and the bare receiver in processes of their own. Every
 * run is checked: the receiver counted every record; PostgreSQL holds every record exactly once
 * (count and count of distinct ids). Rounds take turns going first (lib/rounds.ts); medians count.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * (b) Backpressure, after the rounds (`--backpressure-seconds`, default 60; 0 leaves it out): see
 * backpressureRun. Target: the Sender stalls (its backpressure counter rises) and skipprd's peak
 * RSS stays ≤ 300 MB.
 *
 * Run:  pnpm --filter @skippr/bench websocket-push [--records N] [--rounds N] [--backpressure-seconds N]
 * Env:  SKIPPR_BENCH_DIR     where the temporary data goes (default: the OS temp dir)
 *       SKIPPR_TEST_PG_URL   the PostgreSQL server (default: the local `test` database)
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Sender } from '@skippr/sf'
import { freePorts } from '@skippr/test-servers'
import { exited, untilListening } from './lib/child-server.js'
import { committedRows, freshSchema, PG_URL } from './lib/postgres.js'
import { machineLine, median, ratioCell, table } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { peakRssMbOf } from './lib/server-cpu.js'
import { defaultsEnv, skipprdCli } from './lib/skipprd.js'

/** Records sent before awaiting their appends, as a busy producer keeps appends in flight. */
const APPEND_WINDOW = 256

const RSS_TARGET_MB = 300
const { records, rounds, backpressureSeconds } = commandLine()
const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-ws-'))
const receiverScript = fileURLToPath(new URL('lib/sf-receiver.mjs', import.meta.url))

function commandLine(): { records: number; rounds: number; backpressureSeconds: number } {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: {
      records: { type: 'string', default: '200000' },
      rounds: { type: 'string', default: '5' },
      'backpressure-seconds': { type: 'string', default: '60' },
    },
  })
  const parsed = { records: Number(values.records), rounds: Number(values.rounds) }
  for (const [name, value] of Object.entries(parsed))
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be an integer ≥ 1`)
  const backpressureSeconds = Number(values['backpressure-seconds'])
  if (!Number.isSafeInteger(backpressureSeconds) || backpressureSeconds < 0)
    throw new Error('--backpressure-seconds must be an integer ≥ 0 (0 leaves part (b) out)')
  return { ...parsed, backpressureSeconds }
}

/** Record `i`: a JSON object of about 200 bytes with a unique id. */
function record(i: number): Buffer {
  return Buffer.from(
    JSON.stringify({ id: i, kind: 'click', user: `u-${i % 1000}`, score: i % 97, note: 'x'.repeat(120) }),
  )
}

/** Sends every record through a new Sender to `port`; resolves once each is acknowledged. */
async function send(port: number, round: number, side: string): Promise<void> {
  const sfDir = path.join(dir, `slot-${side}-${round}`)
  const sender = await Sender.fromConfig(
    `ws::addr=127.0.0.1:${port};sf_dir=${sfDir};sf_durability=append;sender_id=bench-${side}-${round};`,
  )
  try {
    for (let i = 0; i < records; i += APPEND_WINDOW) {
      const pending: Promise<bigint>[] = []
      for (let j = i; j < Math.min(records, i + APPEND_WINDOW); j++)
        pending.push(sender.sendBlocking(record(j)))
      await Promise.all(pending)
    }
    await sender.flush()
  } finally {
    await sender.close()
    await rm(sfDir, { recursive: true, force: true })
  }
}

interface Run {
  readonly seconds: number
}

/** skippr.yml of a run: the Websocket source on `port` into PostgreSQL schema `schema`. */
function projectConfig(port: number, schema: string, dataDir: string): string {
  return [
    'data_sources:',
    '  app:',
    `    Websocket: { listen: "127.0.0.1:${port}", format: json, namespace: events }`,
    'data_sinks:',
    '  pg:',
    `    Postgres: { connection_string: "\${BENCH_PG_URL}", schema: ${schema} }`,
    'pipelines:',
    '  app:',
    '    data_source: data_sources.app',
    '    data_sink: data_sinks.pg',
    `    data_dir: ${dataDir}`,
    '',
  ].join('\n')
}

function startSkipprd(config: string, env: Record<string, string> = {}): ChildProcess {
  return spawn(
    process.execPath,
    [skipprdCli(), 'sync', '--config', config, '-p', 'app', '--output', 'json'],
    {
      env: defaultsEnv({ BENCH_PG_URL: PG_URL, ...env }),
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
}

async function skipprdRun(round: number): Promise<Run> {
  const schema = await freshSchema('bench_ws')
  const [port] = (await freePorts(1)) as [number]
  const config = path.join(dir, `skippr-${round}.yml`)
  await writeFile(config, projectConfig(port, schema.name, path.join(dir, `data-${round}`)))
  const child = startSkipprd(config)
  const ended = exited(child)
  try {
    await untilListening(port, child)
    const started = performance.now()
    await send(port, round, 'skipprd')
    const table = `"${schema.name}".events`
    while ((await committedRows(schema.client, table)) < records) await sleep(20)
    const seconds = (performance.now() - started) / 1000
    const { rows } = await schema.client.query<{ n: string; d: string }>(
      `SELECT count(*) AS n, count(DISTINCT id) AS d FROM ${table}`,
    )
    if (Number(rows[0]?.n) !== records || Number(rows[0]?.d) !== records)
      throw new Error(`PostgreSQL holds ${rows[0]?.n} rows (${rows[0]?.d} distinct) of ${records}`)
    return { seconds }
  } finally {
    child.kill('SIGTERM')
    await ended
    await schema.drop()
    await rm(path.join(dir, `data-${round}`), { recursive: true, force: true })
  }
}

async function bareRun(round: number): Promise<Run> {
  const child = spawn(process.execPath, [receiverScript, 'sf', '0', String(records)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const next = async () => JSON.parse((await lines.next()).value as string) as Record<string, number>
  try {
    const { port } = await next()
    const started = performance.now()
    await send(port as number, round, 'bare')
    const seconds = (performance.now() - started) / 1000
    let line = await next()
    while (!('units' in line)) line = await next()
    if (line.units !== records) throw new Error(`the receiver counted ${line.units} of ${records} records`)
    return { seconds }
  } finally {
    child.kill()
  }
}

/**
 * (b): a Sender sending as fast as it can for `backpressureSeconds` into skipprd whose destination
 * table the bench holds locked and whose WAL is capped at 32 MiB: skipprd stops acknowledging (its
 * commits wait for room), so the Sender's own slot (capped at 64 MiB) fills and its appends stall,
 * instead of memory growing anywhere. Reported: the Sender's backpressure stalls and skipprd's
 * peak RSS; then the lock goes, and every record the Sender took must land exactly once.
 */
async function backpressureRun(): Promise<{ taken: number; stalls: number; peakRssMb: number }> {
  const schema = await freshSchema('bench_ws')
  const [port] = (await freePorts(1)) as [number]
  const config = path.join(dir, 'backpressure.yml')
  const dataDir = path.join(dir, 'data-backpressure')
  await writeFile(config, projectConfig(port, schema.name, dataDir))
  const child = startSkipprd(config, { WAL_MAX_TOTAL_BYTES: String(32 * 1024 * 1024) })
  const ended = exited(child)
  const sfDir = path.join(dir, 'slot-backpressure')
  const table = `"${schema.name}".events`
  try {
    await untilListening(port, child)
    const sender = await Sender.fromConfig(
      `ws::addr=127.0.0.1:${port};sf_dir=${sfDir};sf_durability=append;sender_id=bench-held;sf_max_total_bytes=67108864;sf_append_deadline_millis=600000;`,
    )
    // One record first, so the sink has made its table; then it stays locked for the run.
    await sender.sendBlocking(record(0))
    await sender.flush()
    while ((await committedRows(schema.client, table)) < 1) await sleep(20)
    await schema.client.query('BEGIN')
    await schema.client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`)
    let taken = 1
    const until = performance.now() + backpressureSeconds * 1000
    let pending: Promise<unknown> = Promise.resolve()
    while (performance.now() < until) {
      const window: Promise<unknown>[] = []
      for (let j = 0; j < APPEND_WINDOW; j++) window.push(sender.sendBlocking(record(taken + j)))
      pending = Promise.all(window).then(() => {
        taken += APPEND_WINDOW
      })
      // A stalled window waits for room; the run ends at its deadline, not at the appends'.
      await Promise.race([pending, sleep(Math.max(0, until - performance.now()))])
    }
    const stalls = sender.counters().totalBackpressureStalls
    const peakRssMb = await peakRssMbOf(child.pid!)
    await schema.client.query('ROLLBACK')
    await pending
    await sender.flush()
    await sender.close()
    const deadline = Date.now() + 300_000
    while ((await committedRows(schema.client, table)) < taken && Date.now() < deadline) await sleep(100)
    const { rows } = await schema.client.query<{ n: string; d: string }>(
      `SELECT count(*) AS n, count(DISTINCT id) AS d FROM ${table}`,
    )
    if (Number(rows[0]?.n) !== taken || Number(rows[0]?.d) !== taken)
      throw new Error(
        `PostgreSQL holds ${rows[0]?.n} rows (${rows[0]?.d} distinct) of the ${taken} the Sender took`,
      )
    return { taken, stalls, peakRssMb }
  } finally {
    child.kill('SIGTERM')
    await ended
    await schema.drop()
    await rm(dataDir, { recursive: true, force: true })
    await rm(sfDir, { recursive: true, force: true })
  }
}

const rate = (seconds: readonly number[]) =>
  `${Math.round(records / median(seconds)).toLocaleString('en')} records/s`

try {
  console.log(machineLine('skipprd Websocket bench'))
  const results: { skipprd: Run; bare: Run }[] = []
  for (let round = 0; round < rounds; round++) {
    results.push(await inRotation(round, { skipprd: () => skipprdRun(round), bare: () => bareRun(round) }))
    console.log(`round ${round + 1} of ${rounds} done`)
  }
  console.log(
    `\n${table([
      ['side', 'rate', 'ratio'],
      [
        'Sender → skipprd (Websocket source) → PostgreSQL, until landed',
        rate(results.map((r) => r.skipprd.seconds)),
        ratioCell(results.map((r) => r.bare.seconds / r.skipprd.seconds)),
      ],
      ['Sender → Receiver alone, until acked', rate(results.map((r) => r.bare.seconds)), ''],
    ])}`,
  )
  console.log(`\nMedians of ${rounds} rounds of ${records.toLocaleString('en')} records of about 200 bytes.`)
  if (backpressureSeconds > 0) {
    const held = await backpressureRun()
    const met = held.stalls > 0 && held.peakRssMb <= RSS_TARGET_MB
    console.log(
      `\n${table([
        ['(b) backpressure', 'records taken', 'Sender stalls', 'skipprd peak RSS', 'target', 'met'],
        [
          `destination locked, WAL 32 MiB, slot 64 MiB, ${backpressureSeconds} s`,
          held.taken.toLocaleString('en'),
          held.stalls.toLocaleString('en'),
          `${held.peakRssMb.toFixed(0)} MB`,
          `stalls, ≤ ${RSS_TARGET_MB} MB`,
          met ? 'yes' : 'NO',
        ],
      ])}`,
    )
    if (!met) process.exitCode = 1
  }
  console.log(machineLine('done'))
} finally {
  await rm(dir, { recursive: true, force: true })
}
