/**
 * @skippr/sf sender benchmark (issue 3), beside the raw limit in the same run:
 *
 *  (a) records/s and MB/s from a Sender (disk slot, durability=append, acks from a Receiver) to the
 *      receiver's application over loopback, for 1 KiB and 64 KiB records, vs a raw `ws` send loop of the
 *      same records (no persistence, no acks). Target ≥ 0.7× raw at 64 KiB, in the steady state.
 *      Beside them, a floor for a durable sender here (`durableFloor`): the raw loop sending each
 *      4 MiB window only after writing it to a file and fdatasync'ing it. What the floor loses to raw
 *      `ws` is this machine's disk and cores. And the least any durable, acknowledged sender does here
 *      (`minimalSender`): the floor plus a private copy and a CRC32C of each record, sent as DATA
 *      messages to the same Receiver as the Sender's, which acknowledges them. What the Sender loses
 *      to that is its own (segments, trims, the watermark, replay and the rest of the issue).
 *  (b) time to replay a backlog after reconnect: the sender appends while the receiver is down, then the
 *      receiver comes up and the backlog is read back from disk and delivered; with peak RSS (the backlog
 *      is never held in memory).
 *
 * Each run of (a) sends SKIPPR_BENCH_SF_WARMUP_MB first and then SKIPPR_BENCH_SF_MB on the same
 * connection, and both parts are reported. The warm-up part is the cold start (a new process's JIT,
 * its allocator growing, a new slot's first segment files); the steady part, timed where the data
 * arrives, is the sustained rate the target is about. On this 2-core VM raw `ws` runs 3–4× faster
 * once warm, the Sender about 2×, so a short cold run flatters the ratio.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench sf-send
 * The producer keeps 4 MiB of appends in flight (they share fdatasyncs); each side runs
 * SKIPPR_BENCH_SF_ROUNDS times (default 3), in turns, and the best run counts. In (a) the
 * receivers run in a process of their own (lib/sf-receiver.mjs), as a server would: in one process
 * with the sender, the receiver's work took the sender's main thread too.
 *
 * Env:  SKIPPR_BENCH_SF_WARMUP_MB   MB sent first in each run of (a), reported as cold (default 128)
 *       SKIPPR_BENCH_SF_MB          MB sent next, the steady part (default 128)
 *       SKIPPR_BENCH_SF_ROUNDS      rounds per side in (a) (default 3)
 *       SKIPPR_BENCH_SF_BACKLOG_MB  backlog in (b) (default 512; the figure is 1024)
 *       SKIPPR_BENCH_DIR            where the slot goes (default: the OS temp dir)
 */
import { spawn } from 'node:child_process'
import type { FileHandle } from 'node:fs/promises'
import * as fsp from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { crc32c } from '@node-rs/crc32'
import { createReceiver, Sender, SUBPROTOCOL } from '@skippr/sf'
import { WebSocket, WebSocketServer } from 'ws'

const MB = 1_000_000
const KiB = 1024
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)
/** Bytes of appends in flight at once, as a busy producer has: concurrent appends share one fdatasync. */
const APPEND_WINDOW_BYTES = 4 * 1024 * KiB
/** Each side runs this often, alternating, and the best run counts (the machine may be shared). */
const ROUNDS = env('SKIPPR_BENCH_SF_ROUNDS', 3)
/** Windows in the file ring of durableFloor and minimalSender, as the Sender keeps retired segment files. */
const FLOOR_WINDOWS = 8
/** minimalSender's bytes before each payload: a CRC32C, then a DATA message's header for one record. */
const CRC_BYTES = 4
const DATA_HEADER_BYTES = 1 + 8 + 4 + 4
/** minimalSender's message types, from the wire protocol in the package README. */
const MINIMAL_HELLO = 0x01
const MINIMAL_DATA = 0x02
const MINIMAL_WELCOME = 0x81
const MINIMAL_ACK = 0x82

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
  const warmupMb = env('SKIPPR_BENCH_SF_WARMUP_MB', 128)
  const mb = env('SKIPPR_BENCH_SF_MB', 128)
  for (const size of [1 * KiB, 64 * KiB]) {
    const parts = { warmup: records(warmupMb, size), steady: records(mb, size) }
    let raw: Run | undefined
    let floor: Run | undefined
    let minimal: Run | undefined
    let sf: Run | undefined
    for (let round = 0; round < ROUNDS; round++) {
      raw = fastest(raw, await rawWs(size, parts))
      floor = fastest(floor, await durableFloor(size, parts))
      minimal = fastest(minimal, await minimalSender(size, parts))
      sf = fastest(sf, await sfSend(size, parts))
    }
    if (!raw || !floor || !minimal || !sf) throw new Error('SKIPPR_BENCH_SF_ROUNDS must be at least 1')
    const count = (n: number) => n.toLocaleString('en-US')
    console.log(
      `(a) ${size / KiB} KiB records: ${count(parts.warmup)} cold, then ${count(parts.steady)} steady; best of ${ROUNDS}`,
    )
    for (const part of ['cold', 'steady'] as const) {
      console.log(`    ${part}`)
      const ratio = (run: Run) => `ratio ${(raw[part].seconds / run[part].seconds).toFixed(2)}×`
      console.log(`      raw ws (no persistence, no acks)   ${rate(raw[part])}`)
      console.log(`      floor: write+fdatasync, then ws    ${rate(floor[part])}   ${ratio(floor)}`)
      console.log(`      + copy, CRC, DATA, acked           ${rate(minimal[part])}   ${ratio(minimal)}`)
      console.log(`      Sender, durability=append, acked   ${rate(sf[part])}   ${ratio(sf)}`)
    }
  }
  await replayBacklog(env('SKIPPR_BENCH_SF_BACKLOG_MB', 512))
} finally {
  await fsp.rm(root, { recursive: true, force: true })
}

/** A run of (a): its first records from a cold start, and the records after them. */
interface Run {
  cold: Result
  steady: Result
}

function records(mb: number, size: number): number {
  return Math.max(1, Math.floor((mb * MB) / size))
}

/** The raw limit: one ws client sends every record as a binary message. */
async function rawWs(size: number, parts: Parts): Promise<Run> {
  const server = await receiverProcess('raw', size * parts.warmup, size * (parts.warmup + parts.steady))
  const client = await rawClient(server.port)
  const payload = Buffer.alloc(size, 7)
  const start = now()
  await sendRaw(client, Array<Buffer>(parts.warmup + parts.steady).fill(payload))
  const run = await server.run(start, size, parts)
  client.close()
  server.stop()
  return run
}

/**
 * The floor of a durable sender here: the raw loop, but each window of records (what the Sender's
 * producer keeps in flight) is first written to a file and fdatasync'd, and only then sent
 * (`sendDurably`). No copy, no frames, no acks, no receiver logic: what sending only durable records
 * costs on this machine before any work of the Sender's own.
 */
async function durableFloor(size: number, parts: Parts): Promise<Run> {
  const total = parts.warmup + parts.steady
  const server = await receiverProcess('raw', size * parts.warmup, size * total)
  const client = await rawClient(server.port)
  const file = await fsp.open(path.join(root, `floor-${size}`), 'w+')
  const payload = Buffer.alloc(size, 7)
  const start = now()
  await sendDurably(client, file, total, windowRecords(size), (_, count) =>
    Array<Buffer>(count).fill(payload),
  )
  const run = await server.run(start, size, parts)
  await file.close()
  client.close()
  server.stop()
  return run
}

/**
 * The least a durable, acknowledged sender does here, written from the wire protocol in the package
 * README: the floor, plus a private copy of each record (its caller may reuse its buffer) with a
 * CRC32C over it, each record sent as a DATA message of its own to the same Receiver process as the
 * Sender's, and the run ends when the last record is acknowledged. No segments, rotation, trims,
 * watermark, replay or backpressure: a bound for the Sender, not a sender.
 */
async function minimalSender(size: number, parts: Parts): Promise<Run> {
  const total = parts.warmup + parts.steady
  const server = await receiverProcess('sf', parts.warmup, total)
  const { client, acked } = await minimalClient(server.port, BigInt(total))
  const file = await fsp.open(path.join(root, `minimal-${size}`), 'w+')
  const payload = Buffer.alloc(size, 7)
  const start = now()
  await sendDurably(
    client,
    file,
    total,
    windowRecords(size),
    (first, count) =>
      Array.from({ length: count }, (_, k) => {
        const frame = Buffer.allocUnsafe(CRC_BYTES + DATA_HEADER_BYTES + size)
        frame[CRC_BYTES] = MINIMAL_DATA
        frame.writeBigUInt64BE(BigInt(first + k + 1), CRC_BYTES + 1)
        frame.writeUInt32BE(1, CRC_BYTES + 9)
        frame.writeUInt32BE(size, CRC_BYTES + 13)
        frame.set(payload, CRC_BYTES + DATA_HEADER_BYTES)
        frame.writeUInt32BE(crc32c(frame.subarray(CRC_BYTES + DATA_HEADER_BYTES)), 0)
        return frame
      }),
    (frame) => frame.subarray(CRC_BYTES),
  )
  await acked
  const run = await server.run(start, size, parts)
  await file.close()
  client.close()
  server.stop()
  return run
}

/** A connection that said HELLO and got WELCOME; `acked` resolves once FSN `last` is acknowledged. */
async function minimalClient(
  port: number,
  last: bigint,
): Promise<{ client: WebSocket; acked: Promise<void> }> {
  const client = new WebSocket(`ws://127.0.0.1:${port}`, SUBPROTOCOL, { perMessageDeflate: false })
  await new Promise((resolve) => client.once('open', resolve))
  const id = Buffer.from('bench-minimal')
  client.send(Buffer.concat([Buffer.of(MINIMAL_HELLO, 0, 0, id.length), id]))
  let welcomed!: () => void
  let acked!: () => void
  const welcome = new Promise<void>((resolve) => (welcomed = resolve))
  const done = new Promise<void>((resolve) => (acked = resolve))
  client.on('message', (message: Buffer) => {
    if (message[0] === MINIMAL_WELCOME) welcomed()
    else if (message[0] === MINIMAL_ACK && message.readBigUInt64BE(1) >= last) acked()
    else if (message[0] !== MINIMAL_ACK) throw new Error(`the receiver sent message type ${message[0]}`)
  })
  await welcome
  return { client, acked: done }
}

/**
 * Sends `total` records in windows of `window`: each window's buffers (`windowOf`, given the index of
 * its first record) are written to `file` with one writev and fdatasync'd, then sent, as `toSend` of
 * each; the next window's write and sync overlap this one's send. The file is a ring of FLOOR_WINDOWS
 * windows, overwritten in place as the Sender's reused segment files are.
 */
async function sendDurably(
  client: WebSocket,
  file: FileHandle,
  total: number,
  window: number,
  windowOf: (first: number, count: number) => Buffer[],
  toSend: (written: Buffer) => Buffer = (written) => written,
): Promise<void> {
  let synced = Promise.resolve()
  let sent = Promise.resolve()
  /** Where the window written last ends: windows lie end to end, from the start again at slot 0. */
  let end = 0
  for (let i = 0, slot = 0; i < total; i += window, slot = (slot + 1) % FLOOR_WINDOWS) {
    const buffers = windowOf(i, Math.min(window, total - i))
    const position = slot === 0 ? 0 : end
    end = buffers.reduce((at, buffer) => at + buffer.length, position)
    synced = synced.then(async () => {
      await file.writev(buffers, position)
      await file.datasync()
    })
    await sent
    sent = synced.then(() => sendRaw(client, buffers.map(toSend)))
  }
  await sent
}

async function rawClient(port: number): Promise<WebSocket> {
  const client = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false })
  await new Promise((resolve) => client.once('open', resolve))
  return client
}

async function sendRaw(client: WebSocket, messages: readonly Buffer[]): Promise<void> {
  for (const message of messages) {
    client.send(message)
    // Respect the socket like any real sender would, instead of queueing everything in memory.
    if (client.bufferedAmount > 4 * 1024 * KiB) await new Promise((resolve) => setImmediate(resolve))
  }
}

interface Parts {
  /** Records in the cold part. */
  warmup: number
  /** Records in the steady part. */
  steady: number
}

interface ReceiverProcess {
  readonly port: number
  /** The two parts of a run that started at `start` (this clock), from the receiver's marks. */
  run(start: number, size: number, parts: Parts): Promise<Run>
  stop(): void
}

/** lib/sf-receiver.mjs in a child process, listening; `warmup` and `total` in its units. */
async function receiverProcess(mode: 'raw' | 'sf', warmup: number, total: number): Promise<ReceiverProcess> {
  const script = fileURLToPath(new URL('lib/sf-receiver.mjs', import.meta.url))
  const child = spawn(process.execPath, [script, mode, String(warmup), String(total)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  // A bench that fails half way must not leave a receiver listening.
  const killChild = () => child.kill()
  process.on('exit', killChild)
  child.on('exit', () => process.off('exit', killChild))
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => {
    const line = await lines.next()
    if (line.done) throw new Error(`the ${mode} receiver process exited`)
    return JSON.parse(line.value) as Record<string, number>
  }
  const { port } = await next()
  return {
    port: port!,
    async run(start, size, parts) {
      const { warmAt } = await next()
      const { doneAt, units } = await next()
      if (units !== total) throw new Error(`the ${mode} receiver got ${units} of ${total}`)
      const part = (records: number, from: number, to: number): Result => ({
        records,
        bytes: records * size,
        seconds: (to - from) / 1000,
      })
      return { cold: part(parts.warmup, start, warmAt!), steady: part(parts.steady, warmAt!, doneAt!) }
    },
    stop: () => child.kill(),
  }
}

/** This machine's clock in ms, as the receiver process reads it. */
function now(): number {
  return performance.timeOrigin + performance.now()
}

/** The faster of two runs, part by part. */
function fastest(a: Run | undefined, b: Run): Run {
  if (!a) return b
  const faster = (x: Result, y: Result) => (x.seconds <= y.seconds ? x : y)
  return { cold: faster(a.cold, b.cold), steady: faster(a.steady, b.steady) }
}

/** Records through a Sender (disk slot, durability=append) to a Receiver, until all are acknowledged. */
async function sfSend(size: number, parts: Parts): Promise<Run> {
  const total = parts.warmup + parts.steady
  const receiver = await receiverProcess('sf', parts.warmup, total)
  const sfDir = await fsp.mkdtemp(path.join(root, 'a-'))
  const sender = await Sender.fromConfig(
    `ws::addr=127.0.0.1:${receiver.port};sf_dir=${sfDir};sf_durability=append;`,
  )
  const payload = Buffer.alloc(size, 7)
  const start = now()
  await produce(sender, payload, total)
  await sender.flush()
  const run = await receiver.run(start, size, parts)
  await sender.close()
  receiver.stop()
  await fsp.rm(sfDir, { recursive: true, force: true })
  return run
}

/** Records of `size` bytes in APPEND_WINDOW_BYTES. */
function windowRecords(size: number): number {
  return Math.max(1, Math.floor(APPEND_WINDOW_BYTES / size))
}

async function produce(sender: Sender, payload: Buffer, count: number): Promise<void> {
  const window = windowRecords(payload.length)
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
  const rssBefore = process.memoryUsage.rss()
  let peakRss = rssBefore
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
      `(incl. reconnect backoff ≤ 100 ms), peak RSS ${(peakRss / MB).toFixed(0)} MB (${(rssBefore / MB).toFixed(0)} MB when the receiver came up: the runs of (a) left it), reconnects ${counters.totalReconnectsSucceeded}`,
  )
}

async function freePort(): Promise<number> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}
