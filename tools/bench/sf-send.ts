/**
 * @skippr/sf sender benchmark (issue 3), beside the raw limit in the same run:
 *
 *  (a) records/s and MB/s from a Sender (disk slot, durability=append, acks from a Receiver) to the
 *      receiver's application over loopback, for 1 KiB and 64 KiB records, vs a raw `ws` send loop of the
 *      same records (no persistence, no acks). Target ≥ 0.7× raw at 64 KiB.
 *  (b) time to replay a backlog after reconnect: the sender appends while the receiver is down, then the
 *      receiver comes up and the backlog is read back from disk and delivered; with peak RSS (the backlog
 *      is never held in memory).
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench sf-send
 * The producer keeps 4 MiB of appends in flight (they share fdatasyncs); each side runs
 * SKIPPR_BENCH_SF_ROUNDS times (default 3), alternating, and the best run counts. In (a) both
 * receivers run in a process of their own (lib/sf-receiver.mjs), as a server would: in one process
 * with the sender, the receiver's work took the sender's main thread too.
 *
 * Env:  SKIPPR_BENCH_SF_MB          MB sent per side, round and record size in (a) (default 128)
 *       SKIPPR_BENCH_SF_ROUNDS      rounds per side in (a) (default 3)
 *       SKIPPR_BENCH_SF_BACKLOG_MB  backlog in (b) (default 512; the figure is 1024)
 *       SKIPPR_BENCH_DIR            where the slot goes (default: the OS temp dir)
 */
import { spawn } from 'node:child_process'
import * as fsp from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { createReceiver, Sender } from '@skippr/sf'
import { WebSocket, WebSocketServer } from 'ws'

const MB = 1_000_000
const KiB = 1024
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)
/** Bytes of appends in flight at once, as a busy producer has: concurrent appends share one fdatasync. */
const APPEND_WINDOW_BYTES = 4 * 1024 * KiB
/** Each side runs this often, alternating, and the best run counts (the machine may be shared). */
const ROUNDS = env('SKIPPR_BENCH_SF_ROUNDS', 3)

interface Result {
  records: number
  bytes: number
  seconds: number
}

const rate = (r: Result): string =>
  `${Math.round(r.records / r.seconds)
    .toLocaleString('en-US')
    .padStart(9)} records/s  ${(r.bytes / MB / r.seconds).toFixed(1).padStart(7)} MB/s`

const root = await fsp.mkdtemp(
  path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-sf-send-'),
)
try {
  console.log(
    `@skippr/sf send bench — node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`,
  )
  const mb = env('SKIPPR_BENCH_SF_MB', 128)
  for (const size of [1 * KiB, 64 * KiB]) {
    const count = Math.max(1, Math.floor((mb * MB) / size))
    let raw: Result | undefined
    let sf: Result | undefined
    for (let round = 0; round < ROUNDS; round++) {
      raw = fastest(raw, await rawWs(size, count))
      sf = fastest(sf, await sfSend(size, count))
    }
    if (!raw || !sf) throw new Error('SKIPPR_BENCH_SF_ROUNDS must be at least 1')
    console.log(`(a) ${size / KiB} KiB records × ${count.toLocaleString('en-US')}, best of ${ROUNDS}`)
    console.log(`    raw ws (no persistence, no acks)     ${rate(raw)}`)
    console.log(
      `    Sender, durability=append, acked     ${rate(sf)}   ratio ${(raw.seconds / sf.seconds).toFixed(2)}×`,
    )
  }
  await replayBacklog(env('SKIPPR_BENCH_SF_BACKLOG_MB', 512))
} finally {
  await fsp.rm(root, { recursive: true, force: true })
}

/** The raw limit: one ws client sends every record as a binary message; done when the server has them all. */
async function rawWs(size: number, count: number): Promise<Result> {
  const server = await receiverProcess('raw', size * count)
  const client = new WebSocket(`ws://127.0.0.1:${server.port}`, { perMessageDeflate: false })
  await new Promise((resolve) => client.once('open', resolve))
  const payload = Buffer.alloc(size, 7)
  const done = new Promise((resolve) => client.once('message', resolve))
  const start = performance.now()
  for (let i = 0; i < count; i++) {
    client.send(payload)
    // Respect the socket like any real sender would, instead of queueing everything in memory.
    if (client.bufferedAmount > 4 * 1024 * KiB) await new Promise((resolve) => setImmediate(resolve))
  }
  await done
  const seconds = (performance.now() - start) / 1000
  client.close()
  server.stop()
  return { records: count, bytes: size * count, seconds }
}

interface ReceiverProcess {
  readonly port: number
  /** The next line the process prints, parsed. */
  next(): Promise<Record<string, number>>
  stop(): void
}

/** lib/sf-receiver.mjs in a child process, listening. */
async function receiverProcess(mode: 'raw' | 'sf', total: number): Promise<ReceiverProcess> {
  const script = fileURLToPath(new URL('lib/sf-receiver.mjs', import.meta.url))
  const child = spawn(process.execPath, [script, mode, String(total)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => {
    const line = await lines.next()
    if (line.done) throw new Error(`the ${mode} receiver process exited`)
    return JSON.parse(line.value) as Record<string, number>
  }
  const { port } = await next()
  return { port: port!, next, stop: () => child.kill() }
}

function fastest(a: Result | undefined, b: Result): Result {
  return a && a.seconds <= b.seconds ? a : b
}

/** Records through a Sender (disk slot, durability=append) to a Receiver; done when all are acknowledged. */
async function sfSend(size: number, count: number): Promise<Result> {
  const receiver = await receiverProcess('sf', count)
  const sfDir = await fsp.mkdtemp(path.join(root, 'a-'))
  const sender = await Sender.fromConfig(
    `ws::addr=127.0.0.1:${receiver.port};sf_dir=${sfDir};sf_durability=append;`,
  )
  const payload = Buffer.alloc(size, 7)
  const start = performance.now()
  await produce(sender, payload, count)
  await sender.flush()
  const seconds = (performance.now() - start) / 1000
  const { delivered } = await receiver.next()
  if (delivered !== count) throw new Error(`receiver got ${delivered} of ${count} records`)
  await sender.close()
  receiver.stop()
  await fsp.rm(sfDir, { recursive: true, force: true })
  return { records: count, bytes: size * count, seconds }
}

async function produce(sender: Sender, payload: Buffer, count: number): Promise<void> {
  const window = Math.max(1, Math.floor(APPEND_WINDOW_BYTES / payload.length))
  for (let i = 0; i < count; i += window) {
    await Promise.all(Array.from({ length: Math.min(window, count - i) }, () => sender.sendBlocking(payload)))
  }
}

/** Appends a backlog while no receiver listens, then measures how long delivering it takes once one does. */
async function replayBacklog(mb: number): Promise<void> {
  const size = 64 * KiB
  const count = Math.floor((mb * MB) / size)
  const port = await freePort()
  const sfDir = await fsp.mkdtemp(path.join(root, 'b-'))
  const sender = await Sender.fromConfig(
    `ws::addr=127.0.0.1:${port};sf_dir=${sfDir};reconnect_initial_backoff_millis=50;reconnect_max_backoff_millis=100;`,
    { onError: () => {} },
  )
  const payload = Buffer.alloc(size, 7)
  const appendStart = performance.now()
  await produce(sender, payload, count)
  const appendSeconds = (performance.now() - appendStart) / 1000
  let delivered = 0
  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 20)
  const start = performance.now()
  const receiver = await createReceiver({
    port,
    onFrames: ({ frames }) => {
      delivered += frames.length
      return undefined
    },
  })
  await sender.flush()
  const seconds = (performance.now() - start) / 1000
  clearInterval(sampler)
  if (delivered !== count) throw new Error(`receiver got ${delivered} of ${count} records`)
  const counters = sender.counters()
  await sender.close()
  await receiver.close()
  console.log(
    `(b) backlog of ${((count * size) / MB).toFixed(0)} MB in 64 KiB records (appended in ${appendSeconds.toFixed(1)} s while the receiver was down)`,
  )
  console.log(
    `    replayed from disk and acked in ${seconds.toFixed(2)} s = ${((count * size) / MB / seconds).toFixed(1)} MB/s ` +
      `(incl. reconnect backoff ≤ 100 ms), peak RSS ${(peakRss / MB).toFixed(0)} MB, reconnects ${counters.totalReconnectsSucceeded}`,
  )
}

async function freePort(): Promise<number> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}
