/**
 * `skipprd sync --once` into the at-least-once destinations, each beside its raw limit in the same run:
 *
 *  (1) a 1,000,000-row bikehire CSV through the File source (WAL on, defaults, as the e2e bench runs
 *      it) into ClickHouse, vs `clickhouse-client --query "INSERT … FORMAT JSONEachRow" < file` of the
 *      same rows into a table like the sink's. Target ≥ 0.7×. Beside it, the floor: the same rows in
 *      RowBinary, the format the sink sends, through clickhouse-client: how fast the server lands
 *      them once nobody parses text.
 *  (2) the same file into RabbitMQ, a message per row, vs a bare Node process publishing the same
 *      messages with amqplib on a confirm channel with at most 1,000 unconfirmed
 *      (lib/amqp-publish.mjs). Target ≥ 0.8×.
 *  (3) peak RSS of the skipprd process in (1) and (2). Target ≤ 300 MB.
 *
 * The raw limits load exactly what the sinks sent: before the rounds, one skipprd run into each
 * destination (not counted) leaves its rows there, and the bench takes them back: ClickHouse writes
 * its table out as JSONEachRow and as RowBinary (lib/clickhouse.ts), and the queue's messages are
 * consumed into bodies and parts (lib/rabbitmq.ts). The ClickHouse server is started by the bench
 * (@skippr/test-servers) and stopped at its end; RabbitMQ is the local broker, with a fresh exchange
 * and a durable queue bound to it by `#` per round. Every run is checked for its count: 1M rows in
 * its table, 1M messages in the queue (purged after each run).
 *
 * skipprd is the BUILT CLI run as a child process, timed from spawn to exit (lib/sync-once.ts), the
 * raw limits the same way; beside each run's own CPU time is the server's (from /proc,
 * lib/server-cpu.ts): clickhouse-client parses the text itself, the sink's server parses RowBinary.
 * SKIPPR_BENCH_ALO_ROUNDS rounds, in each the runs into one destination back to back, starting one
 * further along each round (lib/rounds.ts); the median of the rounds' ratios counts, with the range.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench at-least-once
 * Env:  SKIPPR_BENCH_ALO_ROWS   rows in the file (default 1,000,000)
 *       SKIPPR_BENCH_ALO_ROUNDS rounds (default 5)
 *       SKIPPR_BENCH_ALO_ONLY   clickhouse or rabbitmq: only that destination's part, and (3) for its runs
 *       SKIPPR_BENCH_PROFILE    1: run skipprd under `node --cpu-prof` and print its top functions
 *                               (slows it down: the ratios are then not the benchmark's)
 *       SKIPPR_BENCH_DIR        where the temporary data goes (default: the OS temp dir)
 *       SKIPPR_BENCH_AMQP_URL   the RabbitMQ broker (default: guest on the local one)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeBikehireFile } from '@skippr/source-sample'
import { type Clickhouse, startClickhouse } from '@skippr/test-servers'
import { clientInsert, countRows, exportTable } from './lib/clickhouse.js'
import { ensureOk, type Measured, measure } from './lib/process.js'
import { AMQP_URL, Broker, type Topic } from './lib/rabbitmq.js'
import { cpuCell, formatRate, machineLine, median, ratioCell, table, verdict } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { serverPid, withServerCpu } from './lib/server-cpu.js'
import { type SkipprdRun, type SyncSetup, syncOnce } from './lib/sync-once.js'

const ROWS = Number(process.env.SKIPPR_BENCH_ALO_ROWS ?? 1_000_000)
const ROUNDS = Number(process.env.SKIPPR_BENCH_ALO_ROUNDS ?? 5)
const PROFILE = process.env.SKIPPR_BENCH_PROFILE === '1'
const DESTINATIONS = ['clickhouse', 'rabbitmq'] as const
const ONLY = process.env.SKIPPR_BENCH_ALO_ONLY
if (ONLY !== undefined && !(DESTINATIONS as readonly string[]).includes(ONLY))
  throw new Error(`SKIPPR_BENCH_ALO_ONLY must be one of ${DESTINATIONS.join(', ')}`)
/** Whether this run measures `destination`. */
const measures = (destination: (typeof DESTINATIONS)[number]) => ONLY === undefined || ONLY === destination
const TARGET = { clickhouse: 0.7, rabbitmq: 0.8, rssMb: 300 }
const MB = 1024 * 1024
/** The AMQP sink's default `max_unconfirmed`, which the bare publisher keeps too. */
const WINDOW = 1000
/** The namespace of the CSV file, and so the ClickHouse table and the routing key. */
const NAMESPACE = 'rentals'
const CAPTURE_DATABASE = 'skippr_bench_capture'
const CH_PASSWORD_VARIABLE = 'SKIPPR_BENCH_CH_PASSWORD'
const AMQP_URL_VARIABLE = 'SKIPPR_BENCH_AMQP_URL'
const RABBITMQ_SERVER = '-s rabbit boot'
const publishScript = fileURLToPath(new URL('lib/amqp-publish.mjs', import.meta.url))

const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-alo-'))
const csv = path.join(dir, `${NAMESPACE}.csv`)
const files = {
  json: path.join(dir, 'rows.jsonl'),
  rowBinary: path.join(dir, 'rows.bin'),
  bodies: path.join(dir, 'bodies.jsonl'),
  parts: path.join(dir, 'parts.json'),
}

/** A run with the CPU time its server spent meanwhile. */
type Served<T extends Measured = Measured> = T & { readonly serverCpuMs: number }

/** A sync of the CSV file into `sink`, which must land every row. */
const sync = (name: string, sink: object, env: Record<string, string>) =>
  syncOnce(dir, { name, csv, sink, env, rows: ROWS, deadletters: 0 } satisfies SyncSetup, PROFILE)

/** A ClickHouse sink entry into `database`, its password taken from the environment as a user keeps it. */
const clickhouseEntry = (server: Clickhouse, database: string) => ({
  Clickhouse: { url: server.url, database, username: server.user, password: `\${${CH_PASSWORD_VARIABLE}}` },
})
const amqpEntry = (exchange: string) => ({ Amqp: { url: `\${${AMQP_URL_VARIABLE}}`, exchange } })

async function expectRows(what: string, count: Promise<number>): Promise<void> {
  const landed = await count
  if (landed !== ROWS) throw new Error(`${what}: ${landed} rows, expected ${ROWS}`)
}

/** The uncounted first run into ClickHouse, whose table is written out as the files the client loads. */
async function captureClickhouse(server: Clickhouse): Promise<void> {
  await sync('clickhouse-capture', clickhouseEntry(server, CAPTURE_DATABASE), {
    [CH_PASSWORD_VARIABLE]: server.password,
  })
  const captured = `${CAPTURE_DATABASE}.${NAMESPACE}`
  await expectRows(`ClickHouse ${captured}`, countRows(server, captured))
  await exportTable(server, captured, 'JSONEachRow', files.json)
  await exportTable(server, captured, 'RowBinary', files.rowBinary)
}

interface ClickhouseRound {
  readonly json: Served
  readonly skipprd: Served<SkipprdRun>
  readonly rowBinary: Served
}

/**
 * A round of (1) in a database of its own: the client's loads go into tables made `AS` the captured
 * one (its columns and engine), skipprd's sink makes its own.
 */
async function clickhouse(server: Clickhouse, pid: number, round: number): Promise<ClickhouseRound> {
  const database = `skippr_bench_alo_${round}`
  const table = (name: string) => `${database}.${name}`
  await server.query(`CREATE DATABASE ${database}`)
  try {
    for (const name of ['json', 'row_binary'])
      await server.query(`CREATE TABLE ${table(name)} AS ${CAPTURE_DATABASE}.${NAMESPACE}`)
    const env = { [CH_PASSWORD_VARIABLE]: server.password }
    const runs = await inRotation(round, {
      json: () => withServerCpu(pid, () => clientInsert(server, table('json'), 'JSONEachRow', files.json)),
      skipprd: () =>
        withServerCpu(pid, () => sync(`clickhouse-${round}`, clickhouseEntry(server, database), env)),
      rowBinary: () =>
        withServerCpu(pid, () => clientInsert(server, table('row_binary'), 'RowBinary', files.rowBinary)),
    })
    for (const name of ['json', NAMESPACE, 'row_binary'])
      await expectRows(`ClickHouse ${table(name)}`, countRows(server, table(name)))
    return runs
  } finally {
    await server.query(`DROP DATABASE IF EXISTS ${database}`)
  }
}

const amqpEnv = { [AMQP_URL_VARIABLE]: AMQP_URL }

/** The uncounted first run into RabbitMQ, whose messages are taken off the queue as the files the bare publisher sends. */
async function captureRabbitmq(broker: Broker): Promise<void> {
  const topic = await broker.freshTopic('capture')
  try {
    await sync('rabbitmq-capture', amqpEntry(topic.exchange), amqpEnv)
    await expectRows(`RabbitMQ queue ${topic.queue}`, broker.depth(topic.queue))
    await broker.capture(topic.queue, ROWS, files.bodies, files.parts)
  } finally {
    await broker.remove(topic)
  }
}

interface RabbitmqRound {
  readonly amqplib: Served
  readonly skipprd: Served<SkipprdRun>
}

/** A round of (2) on an exchange and queue of its own, the queue checked and purged after each run. */
async function rabbitmq(broker: Broker, pid: number, round: number): Promise<RabbitmqRound> {
  const topic = await broker.freshTopic(`round_${round}`)
  const counted = async <T extends Measured>(what: string, run: () => Promise<T>): Promise<Served<T>> => {
    const result = await withServerCpu(pid, run)
    await expectRows(`RabbitMQ queue after ${what}`, broker.depth(topic.queue))
    await broker.purge(topic.queue)
    return result
  }
  try {
    return await inRotation(round, {
      amqplib: () => counted('the bare publisher', () => barePublish(topic)),
      skipprd: () => counted('skipprd', () => sync(`rabbitmq-${round}`, amqpEntry(topic.exchange), amqpEnv)),
    })
  } finally {
    await broker.remove(topic)
  }
}

async function barePublish(topic: Topic): Promise<Measured> {
  const args = [publishScript, AMQP_URL, topic.exchange, files.bodies, files.parts, String(WINDOW)]
  return ensureOk('the bare amqplib publisher', await measure(process.execPath, args))
}

const ms = (runs: readonly Measured[]) => median(runs.map((run) => run.ms))
const syncMs = (runs: readonly SkipprdRun[]) => median(runs.map((run) => run.syncMs))
const serverCpu = (runs: readonly Served[]) => cpuCell(runs.map((run) => ({ cpuMs: run.serverCpuMs })))
const peakMb = (runs: readonly Measured[]) => Math.max(...runs.map((run) => run.peakRss ?? 0)) / MB
const mb = (runs: readonly Measured[]) =>
  runs.some((run) => run.peakRss === undefined) ? '?' : `${peakMb(runs).toFixed(0)} MB`

function skipprdCell(runs: readonly Served<SkipprdRun>[], server: string): string {
  return (
    `${formatRate(ROWS, ms(runs))} (sync ${formatRate(ROWS, syncMs(runs))}), ${cpuCell(runs)}, ` +
    `${server} ${serverCpu(runs)}`
  )
}

function rawCell(label: string, runs: readonly Served[], server: string): string {
  return `${label} ${formatRate(ROWS, ms(runs))}, ${cpuCell(runs)}, ${server} ${serverCpu(runs)}`
}

function report(chRounds: readonly ClickhouseRound[], mqRounds: readonly RabbitmqRound[]): boolean {
  const side = <R, K extends keyof R>(rounds: readonly R[], key: K) => rounds.map((r) => r[key])
  const chRatios = chRounds.map((r) => r.json.ms / r.skipprd.ms)
  const floorRatios = chRounds.map((r) => r.json.ms / r.rowBinary.ms)
  const mqRatios = mqRounds.map((r) => r.amqplib.ms / r.skipprd.ms)
  const chSkipprd = side(chRounds, 'skipprd')
  const mqSkipprd = side(mqRounds, 'skipprd')
  const rssMb = Math.max(0, ...[chSkipprd, mqSkipprd].filter((runs) => runs.length > 0).map(peakMb))
  const rss = [
    measures('clickhouse') ? `clickhouse ${mb(chSkipprd)}` : '',
    measures('rabbitmq') ? `rabbitmq ${mb(mqSkipprd)}` : '',
  ]
  const rssRaw = [
    measures('clickhouse') ? `clickhouse-client ${mb(side(chRounds, 'json'))}` : '',
    measures('rabbitmq') ? `bare amqplib ${mb(side(mqRounds, 'amqplib'))}` : '',
  ]
  const rows: string[][] = [['part', 'skipprd', 'raw limit', 'ratio', 'target', 'met']]
  if (measures('clickhouse'))
    rows.push(
      [
        '(1) → ClickHouse',
        skipprdCell(chSkipprd, 'server'),
        rawCell('clickhouse-client JSONEachRow', side(chRounds, 'json'), 'server'),
        ratioCell(chRatios),
        `≥ ${TARGET.clickhouse}×`,
        verdict(median(chRatios) >= TARGET.clickhouse),
      ],
      [
        '    floor',
        rawCell('clickhouse-client RowBinary', side(chRounds, 'rowBinary'), 'server'),
        'JSONEachRow',
        ratioCell(floorRatios),
        '',
        '',
      ],
    )
  if (measures('rabbitmq'))
    rows.push([
      '(2) → RabbitMQ',
      skipprdCell(mqSkipprd, 'broker'),
      rawCell('bare amqplib', side(mqRounds, 'amqplib'), 'broker'),
      ratioCell(mqRatios),
      `≥ ${TARGET.rabbitmq}×`,
      verdict(median(mqRatios) >= TARGET.rabbitmq),
    ])
  rows.push([
    '(3) peak RSS',
    `${rssMb.toFixed(0)} MB (${rss.filter(Boolean).join(', ')})`,
    rssRaw.filter(Boolean).join(', '),
    '',
    `≤ ${TARGET.rssMb} MB`,
    verdict(rssMb > 0 && rssMb <= TARGET.rssMb),
  ])
  console.log(`\n${table(rows)}\n`)
  console.log(
    `skipprd: spawn to exit ("sync": sync_complete's elapsed_ms), medians of ${ROUNDS} rounds; CPU is user + ` +
      "system of the process, server/broker CPU that of clickhouse-server or RabbitMQ's beam.smp during the " +
      "run. Ratios are the median of the rounds' ratios (their range in brackets); the floor's is " +
      'JSONEachRow over RowBinary, both through clickhouse-client. Peak RSS is the highest of all runs.',
  )
  if (PROFILE) console.log("PROFILED: skipprd ran under --cpu-prof, so these ratios are not the benchmark's.")
  return rows.slice(1).every((row) => row[5] !== 'NO')
}

let server: Clickhouse | undefined
let broker: Broker | undefined
try {
  console.log(machineLine('skipprd at-least-once bench'))
  let started = performance.now()
  await writeBikehireFile(csv, { rows: ROWS, format: 'csv' })
  console.log(
    `generated ${ROWS.toLocaleString('en')} rows of bikehire CSV in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  if (!(ROUNDS >= 1)) throw new Error('SKIPPR_BENCH_ALO_ROUNDS must be at least 1')
  started = performance.now()
  if (measures('clickhouse')) {
    server = await startClickhouse()
    await captureClickhouse(server)
  }
  if (measures('rabbitmq')) {
    broker = await Broker.open()
    await captureRabbitmq(broker)
  }
  const clickhousePid = server && (await serverPid(path.join(server.dir, 'config.xml')))
  const rabbitmqPid = broker && (await serverPid(RABBITMQ_SERVER))
  console.log(`captured what the sinks sent in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const chRounds: ClickhouseRound[] = []
  const mqRounds: RabbitmqRound[] = []
  for (let round = 0; round < ROUNDS; round++) {
    if (server && clickhousePid !== undefined) chRounds.push(await clickhouse(server, clickhousePid, round))
    if (broker && rabbitmqPid !== undefined) mqRounds.push(await rabbitmq(broker, rabbitmqPid, round))
  }
  const met = report(chRounds, mqRounds)
  console.log(machineLine(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`))
  if (!met) process.exitCode = 1
} finally {
  await broker?.close()
  await server?.stop()
  await rm(dir, { recursive: true, force: true })
}
