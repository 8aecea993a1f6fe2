/**
 * `skipprd sync --once` into the object-store sinks, each beside its raw limit in the same run:
 *
 *  (1) for S3 on s3rver, Azure Blob on Azurite and SFTP on sshd (servers the bench starts,
 *      lib/object-stores.ts), and the formats jsonl and parquet: a 1,000,000-row bikehire CSV
 *      through the File source (WAL on, defaults) into the store, vs a bare Node process that
 *      uploads the very objects skipprd wrote, one request each, at the same keys under another
 *      prefix (lib/object-put.mjs: S3 PutObject, Azure Put Blob, SFTP put). The measure is bytes
 *      landed per second; target ≥ 0.8× for jsonl. Beside it the floor: `encodeFile` of the same
 *      batches as JSON lines, in this process; a sink that encodes on one thread, even while the
 *      previous batch uploads, reaches at best the bare upload's time over the longer of the two.
 *  (2) Parquet encoding: file-formats' `encodeFile` of the same rows in the same batches as the
 *      sink encodes them, vs DuckDB's `COPY (SELECT * FROM read_csv(file)) TO 'x.parquet'`, both
 *      in this process, DuckDB's pages compressed with the codec encodeFile's have. Target ≥ 0.5×.
 *      Beside it the floor: after the rounds, one more encodeFile pass under the profiler
 *      (lib/in-process-profile.ts) says how much of its time is hyparquet-writer's own code, which
 *      bounds what a faster decoding of the CSV could reach.
 *  (3) peak RSS of the skipprd processes of (1). Target ≤ 300 MB.
 *
 * Before the rounds, one skipprd run into each store and format (not counted) leaves its objects,
 * which the bench downloads as the files the bare uploader sends, so both sides land the same bytes
 * in the same object sizes. Every skipprd run must report every row landed (lib/sync-once.ts), every
 * bare run must leave the captured objects and bytes; both prefixes are removed after each run.
 * In each round the two sides of one store and format run back to back, starting one further along
 * each round (lib/rounds.ts); the median of the rounds' ratios counts, with their range. Beside each
 * side's wall time is its CPU time, and the server's (its reaped children's too: sshd serves each
 * connection in a child, lib/server-tree-cpu.ts).
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench object-stores [--rows N] [--rounds N] [--formats jsonl,parquet]
 * Env:  SKIPPR_BENCH_DIR  where the temporary data goes (default: the OS temp dir)
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { DuckDBInstance } from '@duckdb/node-api'
import type { NamespaceSchema } from '@skippr/connector-api'
import { encodeFile } from '@skippr/file-formats'
import { writeBikehireFile } from '@skippr/source-sample'
import type { SelfTime } from './lib/cpu-profile.js'
import { profileOf } from './lib/in-process-profile.js'
import { type BenchStore, STORE_KINDS, startStore } from './lib/object-stores.js'
import { ensureOk, type Measured, measure } from './lib/process.js'
import { cpuCell, machineLine, median, ratioCell, table, verdict } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { withServerTreeCpu } from './lib/server-tree-cpu.js'
import { inferredSchema, type SkipprdRun, syncOnce } from './lib/sync-once.js'

const FORMATS = ['jsonl', 'parquet'] as const
type Format = (typeof FORMATS)[number]
const TARGET = { jsonl: 0.8, encoding: 0.5, rssMb: 300 }
const MB = 1024 * 1024
const NAMESPACE = 'rentals'
const putScript = fileURLToPath(new URL('lib/object-put.mjs', import.meta.url))

const { rows: ROWS, rounds: ROUNDS, formats: RUN_FORMATS } = commandLine()
const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-objects-'))
const csv = path.join(dir, `${NAMESPACE}.csv`)

function commandLine(): { rows: number; rounds: number; formats: readonly Format[] } {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: {
      rows: { type: 'string', default: '1000000' },
      rounds: { type: 'string', default: '5' },
      formats: { type: 'string', default: FORMATS.join(',') },
    },
  })
  const rows = Number(values.rows)
  const rounds = Number(values.rounds)
  const formats = values.formats.split(',') as Format[]
  if (!Number.isSafeInteger(rows) || rows < 1) throw new Error('--rows must be an integer ≥ 1')
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error('--rounds must be an integer ≥ 1')
  // Part (2) cuts the CSV into the batches the jsonl objects hold.
  if (!formats.includes('jsonl') || formats.some((f) => !FORMATS.includes(f)))
    throw new Error(`--formats is a comma-separated list of ${FORMATS.join(', ')} that includes jsonl`)
  return { rows, rounds, formats }
}

/** What skipprd wrote into one store in one format, as files for the bare uploader. */
interface Capture {
  /** objects.json: each object's key (under the prefix) and the file holding its bytes. */
  readonly listFile: string
  readonly objects: number
  readonly bytes: number
  /** The rows of each object, in key order: the sink's batches. */
  readonly rowsPerObject: readonly number[]
}

/** A run with its bytes landed and the CPU time its server spent meanwhile. */
type Landed<T extends Measured = Measured> = T & { readonly bytes: number; readonly serverCpuMs: number }

interface StoreRound {
  readonly skipprd: Landed<SkipprdRun>
  readonly bare: Landed
}

const sync = (name: string, store: BenchStore, prefix: string, format: Format) =>
  syncOnce(dir, {
    name,
    csv,
    sink: store.sinkEntry(prefix, format),
    env: store.env,
    rows: ROWS,
    deadletters: 0,
  })

async function landedBytes(store: BenchStore, prefix: string): Promise<{ objects: number; bytes: number }> {
  const listed = await store.list(prefix)
  return { objects: listed.length, bytes: listed.reduce((sum, o) => sum + o.bytes, 0) }
}

/** The uncounted first run into `store` in `format`, whose objects are downloaded for the bare uploader. */
async function capture(store: BenchStore, format: Format): Promise<Capture> {
  const prefix = `capture-${format}`
  await sync(`${store.kind}-${format}-capture`, store, prefix, format)
  const files = path.join(dir, `objects-${store.kind}-${format}`)
  await mkdir(files)
  const list: { key: string; file: string }[] = []
  const rowsPerObject: number[] = []
  let bytes = 0
  for (const [i, { key }] of (await store.list(prefix)).entries()) {
    const body = await store.read(prefix, key)
    const file = path.join(files, `${i}.bin`)
    await writeFile(file, body)
    list.push({ key, file })
    bytes += body.length
    if (format === 'jsonl') rowsPerObject.push(body.reduce((lines, byte) => lines + (byte === 10 ? 1 : 0), 0))
  }
  await store.remove(prefix)
  const listFile = path.join(files, 'objects.json')
  await writeFile(listFile, JSON.stringify(list))
  if (list.length === 0) throw new Error(`${store.label}: skipprd wrote no objects in ${format}`)
  return { listFile, objects: list.length, bytes, rowsPerObject }
}

/** A round of (1) for one store and format: skipprd, then the bare uploader, or the other way round. */
async function storeRound(
  store: BenchStore,
  format: Format,
  captured: Capture,
  round: number,
): Promise<StoreRound> {
  const landed = async <T extends Measured>(prefix: string, run: () => Promise<T>): Promise<Landed<T>> => {
    const result = await withServerTreeCpu(store.pid, run)
    const { bytes } = await landedBytes(store, prefix)
    await store.remove(prefix)
    return { ...result, bytes }
  }
  return inRotation(round, {
    skipprd: () => {
      const prefix = `skipprd-${format}-${round}`
      return landed(prefix, () => sync(`${store.kind}-${format}-${round}`, store, prefix, format))
    },
    bare: () => {
      const prefix = `bare-${format}-${round}`
      return landed(prefix, async () => {
        const run = await barePut(store, captured, prefix)
        const after = await landedBytes(store, prefix)
        if (after.objects !== captured.objects || after.bytes !== captured.bytes)
          throw new Error(
            `the bare uploader left ${after.objects} objects of ${after.bytes} bytes in ${store.label}, ` +
              `expected ${captured.objects} of ${captured.bytes}`,
          )
        return run
      })
    },
  })
}

async function barePut(store: BenchStore, captured: Capture, prefix: string): Promise<Measured> {
  const env = { ...process.env, ...store.putEnv }
  return ensureOk(
    `the bare uploader (${store.label})`,
    await measure(process.execPath, [putScript, captured.listFile, prefix], { env }),
  )
}

/** A side of (2): its wall and CPU time in this process, and the Parquet bytes it made. */
interface Encoded {
  readonly ms: number
  readonly cpuMs: number
  readonly bytes: number
}

async function timed(work: () => Promise<number>): Promise<Encoded> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const bytes = await work()
  const ms = performance.now() - started
  const { user, system } = process.cpuUsage(cpu)
  return { ms, cpuMs: (user + system) / 1000, bytes }
}

/** The CSV's records (its header dropped) cut into bodies of the sink's batches' row counts. */
async function csvBatches(rowsPerObject: readonly number[]): Promise<{ body: Uint8Array; rows: number }[]> {
  const file = await readFile(csv)
  let start = file.indexOf(10) + 1
  return rowsPerObject.map((rows) => {
    let end = start
    for (let i = 0; i < rows; i++) end = file.indexOf(10, end) + 1
    const body = file.subarray(start, end)
    start = end
    return { body, rows }
  })
}

interface EncodingRound {
  readonly encodeFile: Encoded
  readonly duckdb: Encoded
  /** The floor of (1) in jsonl: the sink's encoding of the same batches as JSON lines. */
  readonly jsonl: Encoded
}

type Batches = readonly { body: Uint8Array; rows: number }[]
type Connection = Awaited<ReturnType<DuckDBInstance['connect']>>

/** The bytes of every batch encoded as the sink encodes it (`compression: none`). */
async function encodeBatches(batches: Batches, schema: NamespaceSchema, format: Format): Promise<number> {
  let bytes = 0
  for (const [i, { body, rows }] of batches.entries()) {
    const part = { namespace: NAMESPACE, schemaVersion: 1, format: 'csv' as const, rows, body, schema }
    const where = { target: 'the bench', batch: `batch ${i}` }
    for (const chunk of await encodeFile([part], { format, compression: 'none' }, where))
      bytes += chunk.length
  }
  return bytes
}

/** The codec of the pages encodeFile writes, so DuckDB compresses its file alike. */
async function sinkCodec(batches: Batches, schema: NamespaceSchema, duckdb: Connection): Promise<string> {
  const [first] = batches
  if (!first) throw new Error('no batches to encode')
  const part = { namespace: NAMESPACE, schemaVersion: 1, format: 'csv' as const, ...first, schema }
  const file = path.join(dir, 'codec.parquet')
  const where = { target: file, batch: 'codec' }
  await writeFile(
    file,
    Buffer.concat(await encodeFile([part], { format: 'parquet', compression: 'none' }, where)),
  )
  const reader = await duckdb.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${file}')`)
  const codecs = reader.getRowObjectsJS().map((row) => String(row.compression))
  if (codecs.length !== 1) throw new Error(`encodeFile's pages use ${codecs.join(', ')}: expected one codec`)
  return codecs[0] as string
}

async function encodingRound(
  batches: Batches,
  schema: NamespaceSchema,
  duckdb: Connection,
  codec: string,
  round: number,
): Promise<EncodingRound> {
  const out = path.join(dir, 'duckdb.parquet')
  return inRotation(round, {
    encodeFile: () => timed(() => encodeBatches(batches, schema, 'parquet')),
    duckdb: () =>
      timed(async () => {
        await duckdb.run(
          `COPY (SELECT * FROM read_csv('${csv}')) TO '${out}' (FORMAT parquet, COMPRESSION ${codec})`,
        )
        return (await stat(out)).size
      }),
    jsonl: () => timed(() => encodeBatches(batches, schema, 'jsonl')),
  })
}

const rate = (bytes: number, ms: number) => `${(bytes / MB / (ms / 1000)).toFixed(1)} MB/s`
const rowRate = (ms: number) => `${Math.round(ROWS / (ms / 1000)).toLocaleString('en')} rows/s`
const ms = (runs: readonly { ms: number }[]) => median(runs.map((run) => run.ms))
const serverCpu = (runs: readonly { serverCpuMs: number }[]) =>
  `server CPU ${(median(runs.map((run) => run.serverCpuMs)) / 1000).toFixed(2)} s`
const peakMb = (runs: readonly Measured[]) => Math.max(...runs.map((run) => run.peakRss ?? 0)) / MB

function landedCell(label: string, runs: readonly Landed[]): string {
  const bytes = median(runs.map((run) => run.bytes))
  return `${label}${rate(bytes, ms(runs))}, ${cpuCell(runs)}, ${serverCpu(runs)}`
}

function report(
  storeRounds: ReadonlyMap<string, { store: BenchStore; format: Format; rounds: StoreRound[] }>,
  encoding: readonly EncodingRound[],
  profile: readonly SelfTime[],
): boolean {
  const rows: string[][] = [['part', 'skipprd', 'raw limit', 'ratio', 'target', 'met']]
  const skipprdRuns: SkipprdRun[] = []
  const bareRuns: Measured[] = []
  const rss: string[] = []
  const bounds: string[] = []
  for (const { store, format, rounds } of storeRounds.values()) {
    const ratios = rounds.map((r) => r.skipprd.bytes / r.skipprd.ms / (r.bare.bytes / r.bare.ms))
    const skipprd = rounds.map((r) => r.skipprd)
    skipprdRuns.push(...skipprd)
    bareRuns.push(...rounds.map((r) => r.bare))
    rss.push(`${store.kind} ${format} ${peakMb(skipprd).toFixed(0)}`)
    // Encoding on one thread while the previous batch uploads: no sink can beat the longer of the two.
    if (format === 'jsonl')
      bounds.push(
        `${store.kind} ${ratioCell(rounds.map((r, i) => r.bare.ms / Math.max(r.bare.ms, encoding[i]?.jsonl.ms ?? 0)))}`,
      )
    const target = format === 'jsonl' ? TARGET.jsonl : undefined
    rows.push([
      `(1) ${store.label}, ${format}`,
      `${landedCell('', skipprd)} (${rowRate(ms(skipprd))})`,
      landedCell(
        'bare ',
        rounds.map((r) => r.bare),
      ),
      ratioCell(ratios),
      target === undefined ? '—' : `≥ ${target}×`,
      target === undefined ? '' : verdict(median(ratios) >= target),
    ])
  }
  const side = (key: keyof EncodingRound) => encoding.map((r) => r[key])
  const jsonl = side('jsonl')
  rows.push([
    '    floor: encoding',
    `encodeFile jsonl ${rate(median(jsonl.map((r) => r.bytes)), ms(jsonl))} (${rowRate(ms(jsonl))}), ${cpuCell(jsonl)}`,
    'the bare upload of the same run',
    bounds.join(', '),
    '',
    '',
  ])
  const encodingRatios = encoding.map((r) => r.duckdb.ms / r.encodeFile.ms)
  const encodingCell = (label: string, runs: readonly Encoded[]) =>
    `${label} ${rowRate(ms(runs))}, ${cpuCell(runs)}, ${(median(runs.map((r) => r.bytes)) / MB).toFixed(1)} MB`
  rows.push([
    '(2) Parquet encoding',
    encodingCell('encodeFile', side('encodeFile')),
    encodingCell('DuckDB COPY', side('duckdb')),
    ratioCell(encodingRatios),
    `≥ ${TARGET.encoding}×`,
    verdict(median(encodingRatios) >= TARGET.encoding),
  ])
  const writerShare = profile
    .filter((f) => f.name.includes('hyparquet-writer/'))
    .reduce((sum, f) => sum + f.share, 0)
  const writerMs = writerShare * ms(side('encodeFile'))
  rows.push([
    '    floor: hyparquet-writer',
    `${(writerShare * 100).toFixed(0)}% of encodeFile's profile, about ${(writerMs / 1000).toFixed(2)} s`,
    'DuckDB COPY',
    `≤ ${(ms(side('duckdb')) / writerMs).toFixed(2)}×`,
    '',
    '',
  ])
  const rssMb = peakMb(skipprdRuns)
  rows.push([
    '(3) peak RSS',
    `${rssMb.toFixed(0)} MB (${rss.join(', ')})`,
    `bare uploaders ${peakMb(bareRuns).toFixed(0)} MB`,
    '',
    `≤ ${TARGET.rssMb} MB`,
    verdict(rssMb > 0 && rssMb <= TARGET.rssMb),
  ])
  console.log(`\n${table(rows)}\n`)
  console.log("encodeFile's Parquet pass under the profiler, self time:")
  for (const { name, share } of profile.slice(0, 12))
    console.log(`  ${(share * 100).toFixed(1).padStart(5)}%  ${name}`)
  console.log('')
  console.log(
    `Medians of ${ROUNDS} rounds of ${ROWS.toLocaleString('en')} rows. (1): bytes landed per second, spawn to exit, ` +
      'skipprd against a bare process uploading the same objects; CPU is user + system of the process, server ' +
      "CPU that of s3rver, Azurite or sshd (with its connections' children) during the run. (2): in this " +
      "process, wall and CPU time (DuckDB's threads included), DuckDB's pages compressed as encodeFile's. The " +
      "floor's ratios are the bare upload's time over the longer of it and encodeFile's jsonl time: a sink that " +
      "encodes on one thread, even while the previous batch uploads, reaches no more. Ratios are the median of the rounds' ratios " +
      '(their range in brackets). Peak RSS is the highest of all skipprd runs, in MB.',
  )
  return rows.slice(1).every((row) => row[5] !== 'NO')
}

const stores: BenchStore[] = []
let duckdbInstance: DuckDBInstance | undefined
try {
  console.log(machineLine('skipprd object-store bench'))
  let started = performance.now()
  await writeBikehireFile(csv, { rows: ROWS, format: 'csv' })
  const schema = await inferredSchema(csv)
  console.log(
    `generated ${ROWS.toLocaleString('en')} rows of bikehire CSV in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  started = performance.now()
  for (const kind of STORE_KINDS) stores.push(await startStore(kind))
  const storeRounds = new Map<
    string,
    { store: BenchStore; format: Format; captured: Capture; rounds: StoreRound[] }
  >()
  for (const store of stores)
    for (const format of RUN_FORMATS)
      storeRounds.set(`${store.kind} ${format}`, {
        store,
        format,
        captured: await capture(store, format),
        rounds: [],
      })
  console.log(`captured what the sinks wrote in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const jsonl = storeRounds.get(`${STORE_KINDS[0]} jsonl`)?.captured as Capture
  const batches = await csvBatches(jsonl.rowsPerObject)
  duckdbInstance = await DuckDBInstance.create(':memory:')
  const duckdb = await duckdbInstance.connect()
  const codec = await sinkCodec(batches, schema, duckdb)
  const encoding: EncodingRound[] = []
  for (let round = 0; round < ROUNDS; round++) {
    for (const entry of storeRounds.values())
      entry.rounds.push(await storeRound(entry.store, entry.format, entry.captured, round))
    encoding.push(await encodingRound(batches, schema, duckdb, codec, round))
    console.log(`round ${round + 1} of ${ROUNDS} done`)
  }
  duckdb.closeSync()
  const profile = await profileOf(path.join(dir, 'encode-profile'), () =>
    encodeBatches(batches, schema, 'parquet'),
  )
  const met = report(storeRounds, encoding, profile)
  console.log(machineLine(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`))
  if (!met) process.exitCode = 1
} finally {
  duckdbInstance?.closeSync()
  for (const store of stores) await store.stop()
  await rm(dir, { recursive: true, force: true })
}
