/**
 * @skippr/wal benchmark (issue 4), each part beside its raw limit in the same run:
 *
 *  (a) 10 MB batches a source hands over as CSV / JSON-lines bytes, committed, vs `@skippr/sf` durable
 *      append of the same bytes into a slot with the same file size. Target ≥ 0.9×.
 *  (b) batches handed over as bikehire row objects, encoded and committed on one core, vs JSON.stringify
 *      of the same rows alone. Target ≥ 700,000 rows/s.
 *  (c) peak RSS of a process that writes a backlog of 10 MB batches and then drains it (pending() +
 *      markLanded()), vs the same backlog through a raw slot (append, then replay + ack). Target ≤ 200 MB.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench wal
 * Env:  SKIPPR_BENCH_WAL_MB       MB committed per side in (a) (default 400)
 *       SKIPPR_BENCH_WAL_ROWS     rows per encoder in (b) (default 1,000,000)
 *       SKIPPR_BENCH_BACKLOG_MB   backlog in (c) (default 1024; the run uses 5120)
 *       SKIPPR_BENCH_DIR          where the temporary data goes (default: the OS temp dir)
 *       SKIPPR_BENCH_WAL_PARTS    which parts to run, e.g. `b` (default `abc`; (a) and (c) write GBs)
 */
import { spawnSync } from 'node:child_process'
import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openSlot } from '@skippr/sf'
import {
  BatchBuffer,
  type BatchPart,
  type Offset,
  openWal,
  type ResumePositions,
  resolveWalSettings,
  type Wal,
} from '@skippr/wal'

const MB = 1_000_000
const MiB = 1024 * 1024
const BATCH_BYTES = 10 * MB
/** WAL_BYTES_PER_FILE's default (the default 10 MiB byte threshold); the raw slot uses the same size. */
const FILE_BYTES = 10 * MiB
const SEED = 42
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)

async function main(): Promise<void> {
  console.log(
    `@skippr/wal bench — node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`,
  )
  const parts = process.env.SKIPPR_BENCH_WAL_PARTS ?? 'abc'
  if (parts.includes('a')) await rawBytes()
  if (parts.includes('b')) await rowObjects()
  if (parts.includes('c')) backlog()
}

// ---- (a) raw bytes ----

async function rawBytes(): Promise<void> {
  const totalBytes = env('SKIPPR_BENCH_WAL_MB', 400) * MB
  for (const format of ['csv', 'jsonl'] as const) {
    const part = await sampleBatch(format, BATCH_BYTES)
    const batches = Math.max(4, Math.round(totalBytes / part.body.length))
    const bytes = batches * part.body.length
    const rate = (t: Timing) => (bytes / MB / (t.ms / 1000)).toFixed(0)
    const cpuPerBatch = (t: Timing) => (t.cpuMs / batches).toFixed(1)
    // Appends and commits alternate, batch after batch, each side going first every other time: both meet
    // the same disk and load, and each the other's background work (the next segment's preparation).
    const time = { sf: noTime(), wal: noTime() }
    const sfDir = await freshDir()
    const slot = await openRawSlot(sfDir)
    await withWal(async (wal) => {
      const append = async () => addTo(time.sf, await timed(async () => void (await slot.append(part.body))))
      const commit = async (i: number) =>
        addTo(
          time.wal,
          await timed(async () => void (await wal.commit({ offset: { batch: i }, parts: [part] }))),
        )
      for (let i = 0; i < batches; i++) {
        if (i % 2 === 0) await append().then(() => commit(i))
        else await commit(i).then(append)
      }
    })
    await slot.close()
    await fsp.rm(sfDir, { recursive: true, force: true })
    // The buffered path pipelines, so it runs on its own, with a raw run of the same bytes right after it.
    const buffered = await timed(() => commitThroughBuffer(part, batches))
    const raw = await timed(() => appendRaw(part.body, batches))
    console.log(
      `(a) ${format}, ${batches} batches of ${(part.body.length / MB).toFixed(1)} MB: sf append ${rate(time.sf)} MB/s, ` +
        `wal commit ${rate(time.wal)} MB/s → ${(time.sf.ms / time.wal.ms).toFixed(2)}× (target ≥ 0.9×); ` +
        `CPU per batch ${cpuPerBatch(time.sf)} vs ${cpuPerBatch(time.wal)} ms; 64 KiB chunks through BatchBuffer ` +
        `${rate(buffered)} MB/s vs sf append ${rate(raw)} MB/s → ${(raw.ms / buffered.ms).toFixed(2)}×`,
    )
  }
}

/** The raw side: a slot made as the WAL makes its own, so that a ratio is the WAL's own cost. */
function openRawSlot(sfDir: string) {
  return openSlot({
    sfDir,
    senderId: 'raw',
    maxSegmentBytes: FILE_BYTES,
    maxTotalBytes: 2 ** 50,
    preallocate: 'sparse',
  })
}

async function appendRaw(body: Uint8Array, n: number): Promise<void> {
  const sfDir = await freshDir()
  const slot = await openRawSlot(sfDir)
  for (let i = 0; i < n; i++) await slot.append(body)
  await slot.close()
  await fsp.rm(sfDir, { recursive: true, force: true })
}

/** The same bytes as a file source hands them over: 64 KiB chunks of whole rows, buffered to 10 MB. */
async function commitThroughBuffer(part: BatchPart, n: number): Promise<void> {
  const chunks = splitRows(part.body, 64 * 1024)
  await withWal(async (wal) => {
    const buffer = new BatchBuffer({
      thresholdBytes: BATCH_BYTES,
      thresholdSeconds: 60,
      commit: (b) => wal.commit(b),
    })
    for (let i = 0; i < n; i++) {
      for (const [c, body] of chunks.entries()) {
        const rows = c === 0 ? part.rows : 0 // the row count is not what this measures
        await buffer.add({ ...part, rows, body, offset: { batch: i, chunk: c } })
      }
    }
    await buffer.close()
  })
}

// ---- (b) row objects ----

async function rowObjects(): Promise<void> {
  const { encodeCsv, encodeJsonl } = await import('@skippr/connector-api')
  const { bikehireRows, bikehireSchema } = await import('@skippr/source-sample')
  const total = env('SKIPPR_BENCH_WAL_ROWS', 1_000_000)
  const pageRows = 4096
  // The source's work, done before timing: distinct pages of row objects, as a database source reads them.
  // (Rental is an interface without an index signature; the encoders take any record.)
  const pages = Array.from(
    { length: 64 },
    (_, i) => bikehireRows(SEED, i * pageRows, pageRows) as unknown as Record<string, unknown>[],
  )
  const passes = Math.ceil(total / (pages.length * pageRows))
  const rows = passes * pages.length * pageRows
  const fields = bikehireSchema.fields
  const settings = resolveWalSettings({ env: {} })
  const results: Array<[string, Timing]> = []
  const preEncoded = new Map(pages.map((page) => [page, encodeCsv(page, fields)]))

  const stringify = await timed(async () => {
    let length = 0
    for (let p = 0; p < passes; p++)
      for (const page of pages) for (const row of page) length += JSON.stringify(row).length
    if (length === 0) throw new Error('nothing stringified')
  })
  results.push(['JSON.stringify alone', stringify])
  const encoders: Array<[string, 'csv' | 'jsonl', (r: (typeof pages)[number]) => Uint8Array]> = [
    ['encodeJsonl + commit', 'jsonl', (r) => encodeJsonl(r)],
    ['encodeCsv + commit', 'csv', (r) => encodeCsv(r, fields)],
    // The WAL's own share: the same pages, encoded before timing.
    ['CSV encoded beforehand, commit only', 'csv', (page) => preEncoded.get(page)!],
  ]
  for (const [name, format, encode] of encoders) {
    // Pages go through the BatchBuffer at the default thresholds (10 MiB batches in 10 MiB WAL files),
    // so encoding the next batch overlaps the disk write of the previous one, as in a sync.
    const timing = await timed(() =>
      withWal(async (wal) => {
        const buffer = new BatchBuffer({
          thresholdBytes: settings.bufferThresholdBytes,
          thresholdSeconds: settings.bufferThresholdSeconds,
          commit: (batch) => wal.commit(batch),
        })
        let n = 0
        for (let p = 0; p < passes; p++) {
          for (const page of pages) {
            const body = encode(page)
            await buffer.add({
              namespace: 'rentals',
              schemaVersion: 1,
              format,
              rows: page.length,
              body,
              offset: n++,
            })
          }
        }
        await buffer.close()
      }),
    )
    results.push([name, timing])
  }
  // Rows per second of wall time, and per second of this process's CPU time: the second holds steady
  // when other processes compete for the cores.
  const perSecond = (ms: number) => Math.round(rows / (ms / 1000))
  const base = results[0]![1]
  for (const [name, t] of results) {
    const wall = perSecond(t.ms)
    const target = name.endsWith('+ commit')
      ? ` (target ≥ 700,000: ${wall >= 700_000 ? 'met' : 'missed'})`
      : ''
    console.log(
      `(b) ${rows.toLocaleString('en')} bikehire rows, ${name}: ${wall.toLocaleString('en')} rows/s ` +
        `(${perSecond(t.cpuMs).toLocaleString('en')} per CPU-second) → ${(base.ms / t.ms).toFixed(2)}× JSON.stringify${target}`,
    )
  }
}

// ---- (c) backlog memory ----

function backlog(): void {
  const mb = env('SKIPPR_BENCH_BACKLOG_MB', 1024)
  const run = (side: 'wal' | 'sf') => {
    const r = spawnSync(process.execPath, ['--input-type=module', '--eval', BACKLOG_CHILD], {
      env: {
        ...process.env,
        BENCH_SIDE: side,
        BENCH_DIR: root,
        BENCH_BATCHES: String(Math.ceil((mb * MB) / BATCH_BYTES)),
      },
      encoding: 'utf8',
    })
    if (r.status !== 0) throw new Error(`backlog child (${side}) failed: ${r.stderr}`)
    return JSON.parse(r.stdout) as {
      peakMb: number
      writePeakMb: number
      startMb: number
      writeS: number
      drainS: number
    }
  }
  const sf = run('sf')
  const wal = run('wal')
  console.log(
    `(c) ${mb} MB backlog of 10 MB batches written, reopened, drained: wal peak RSS ${wal.peakMb} MB ` +
      `(${wal.startMb} MB at start, ${wal.writePeakMb} MB while writing; write ${wal.writeS} s, drain ${wal.drainS} s), ` +
      `raw sf slot peak ${sf.peakMb} MB (${sf.writePeakMb} MB while writing) → ${(wal.peakMb / sf.peakMb).toFixed(2)}× ` +
      `(target ≤ 200 MB: ${wal.peakMb <= 200 ? 'met' : 'missed'})`,
  )
}

/**
 * The backlog child: plain JavaScript on the built packages, run by node itself as skipprd runs (tsx
 * alone adds about 30 MB of RSS). It writes BENCH_BATCHES batches of one repeated CSV row through the WAL
 * (commit) or a raw slot (append), closes, reopens as after a restart, drains (pending + markLanded, or
 * replay + ack) and prints its RSS in MB.
 */
const BACKLOG_CHILD = `
import { openSlot } from '@skippr/sf'
import { openWal } from '@skippr/wal'
const { BENCH_SIDE: side, BENCH_DIR: dir } = process.env
const batches = Number(process.env.BENCH_BATCHES)
const row = '1,2,3,4,"2024-01-01T00:00:00Z","2024-01-01T00:10:00Z",600,"member",2.5\\n'
const rows = Math.floor(${BATCH_BYTES} / row.length)
const part = { namespace: 'rentals', schemaVersion: 1, format: 'csv', rows, body: Buffer.from(row.repeat(rows)) }
const mb = (bytes) => Math.round(bytes / ${MiB})
const peak = () => mb(process.resourceUsage().maxRSS * 1024)
const startMb = mb(process.memoryUsage().rss)
let saved
const positions = { load: async () => saved, save: async (offset) => { saved = offset } }
const open = () => side === 'wal'
  ? openWal({ pipeline: 'bench', dataDir: dir, bytesPerFile: ${FILE_BYTES}, positions })
  : openSlot({ sfDir: dir, senderId: 'raw', maxSegmentBytes: ${FILE_BYTES}, maxTotalBytes: 2 ** 50, preallocate: 'sparse' })
let t = performance.now()
const writer = await open()
for (let i = 0; i < batches; i++) {
  if (side === 'wal') await writer.commit({ offset: { batch: i }, parts: [part] })
  else await writer.append(part.body)
}
await writer.close()
const writeS = (performance.now() - t) / 1000
const writePeakMb = peak()
t = performance.now()
const reader = await open()
let drained = 0
if (side === 'wal') {
  for await (const batch of reader.pending()) { await reader.markLanded(batch.id); drained++ }
} else {
  for await (const frame of reader.replay(1n)) { await reader.ack(frame.fsn); drained++ }
}
await reader.close()
if (drained !== batches) throw new Error('drained ' + drained + ' of ' + batches)
const drainS = (performance.now() - t) / 1000
console.log(JSON.stringify({ peakMb: peak(), writePeakMb, startMb, writeS: +writeS.toFixed(1), drainS: +drainS.toFixed(1) }))
`

// ---- helpers ----

/** Whole bikehire rows, at most `bytes` bytes, in one part, made by the sample source's encoder. */
async function sampleBatch(format: 'csv' | 'jsonl', bytes: number): Promise<BatchPart> {
  const { BikehireEncoder } = await import('@skippr/source-sample')
  const encoded = new BikehireEncoder(SEED, format).encode(0, Math.ceil(bytes / 60))
  const body = encoded.subarray(0, encoded.lastIndexOf(10, bytes - 1) + 1)
  let rows = 0
  for (let at = body.indexOf(10); at !== -1; at = body.indexOf(10, at + 1)) rows++
  return { namespace: 'rentals', schemaVersion: 1, format, rows, body: Buffer.from(body) }
}

/** Splits a body into chunks of whole rows, each about `size` bytes. */
function splitRows(body: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = []
  let start = 0
  while (start < body.length) {
    const newline = body.indexOf(10, Math.min(start + size, body.length) - 1)
    const end = newline === -1 ? body.length : newline + 1
    chunks.push(body.subarray(start, end))
    start = end
  }
  return chunks
}

async function withWal(work: (wal: Wal) => Promise<void>): Promise<void> {
  const dataDir = path.join(root, 'wal-data')
  const wal = await openWal({
    pipeline: 'bench',
    dataDir,
    bytesPerFile: FILE_BYTES,
    positions: memoryPositions(),
  })
  try {
    await work(wal)
  } finally {
    await wal.close()
  }
  await fsp.rm(dataDir, { recursive: true, force: true })
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

async function freshDir(): Promise<string> {
  return fsp.mkdtemp(path.join(root, 'sf-'))
}

interface Timing {
  ms: number
  /** CPU time of this process (user + system, all threads). */
  cpuMs: number
}

async function timed(work: () => Promise<void>): Promise<Timing> {
  const cpu = process.cpuUsage()
  const t = performance.now()
  await work()
  const used = process.cpuUsage(cpu)
  return { ms: performance.now() - t, cpuMs: (used.user + used.system) / 1000 }
}

function noTime(): Timing {
  return { ms: 0, cpuMs: 0 }
}

function addTo(total: Timing, t: Timing): void {
  total.ms += t.ms
  total.cpuMs += t.cpuMs
}

// Last, so every module-level constant above is initialised before the run starts.
const root = await fsp.mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-wal-'))
try {
  await main()
} finally {
  await fsp.rm(root, { recursive: true, force: true })
}
