// Throughput of the Sample generator and the File source (CSV, JSON lines and Parquet), each beside
// its raw limit in the same run.
// Run from the repo root after building: `pnpm turbo run build --filter=@skippr/source-file...` then
// `cd tools/bench && pnpm sources [rows]` (default 1,000,000 rows).
// Not a test: the numbers depend on the machine and on what else runs on it; CPU seconds are
// printed beside wall seconds because the machine may be shared.
import { mkdtemp, open, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { source } from '@skippr/source-file'
import { BikehireEncoder, writeBikehireFile } from '@skippr/source-sample'

const rows = Number(process.argv[2] ?? 1_000_000)
const rounds = 3

async function timed(label, units, run) {
  let best
  for (let round = 0; round < rounds; round++) {
    const wall = performance.now()
    const cpu = process.cpuUsage()
    const result = await run()
    const used = process.cpuUsage(cpu)
    const seconds = { wall: (performance.now() - wall) / 1000, cpu: (used.user + used.system) / 1e6 }
    if (!best || seconds.wall < best.wall) best = { ...seconds, result }
  }
  const rate = (n) =>
    `${(n / best.wall / 1e6).toFixed(2)} M${units}/s wall, ${(n / best.cpu / 1e6).toFixed(2)} M${units}/s cpu`
  console.log(`${label.padEnd(34)} ${rate(best.result)}  (${best.wall.toFixed(3)} s)`)
  return best
}

// Sample: generating CSV rows, against writing the same number of bytes one by one in JavaScript.
const encoder = new BikehireEncoder(1, 'csv')
let bytesPerRow = 0
const generated = await timed('Sample: CSV rows generated', 'rows', () => {
  let bytes = 0
  for (let row = 0; row < rows; row += 10_000)
    bytes += encoder.encode(row, Math.min(10_000, rows - row)).length
  bytesPerRow = bytes / rows
  return rows
})
const filled = await timed('raw limit: JS byte writes', 'B', () => {
  const block = new Uint8Array(1 << 20)
  const total = Math.round(rows * bytesPerRow)
  for (let done = 0; done < total; done += block.length)
    for (let i = 0; i < block.length; i++) block[i] = i & 127
  return total
})
console.log(
  `  ratio (bytes/s): ${((rows * bytesPerRow) / generated.wall / (filled.result / filled.wall)).toFixed(2)}`,
)

// File: reading generated CSV and JSON-lines files through the source, each against reading the
// file in the same blocks. JSON lines also pays for the check of every record's top-level keys.
const dir = await mkdtemp(join(tmpdir(), 'skippr-bench-'))
try {
  for (const format of ['csv', 'jsonl']) await readFile(format)
  await readParquet()
} finally {
  await rm(dir, { recursive: true, force: true })
}

/** Reads the file's chunks through the File source; returns the bytes passed on (and counts rows). */
function readThroughSource(name, format, counted) {
  const logger = { debug() {}, info() {}, warn: console.warn, error: console.error }
  const files = source.create(
    { path: name, format },
    { configDir: dir, dataDir: dir, pipeline: 'bench', logger },
  )
  return async () => {
    let bytes = 0
    counted.rows = 0
    for await (const chunk of files.read(undefined, {
      signal: new AbortController().signal,
      follow: false,
    })) {
      bytes += chunk.body.length
      counted.rows += chunk.rows
    }
    return bytes
  }
}

// Parquet: the rows must be decoded and encoded as CSV, so the raw limit is DuckDB doing the same
// conversion in C++ (COPY … TO csv), in this process.
async function readParquet() {
  const csv = join(dir, 'rentals.csv')
  const parquet = join(dir, 'rentals.parquet')
  const duck = await (await DuckDBInstance.create(':memory:')).connect()
  await duck.run(`COPY (SELECT * FROM read_csv('${csv}')) TO '${parquet}' (FORMAT parquet)`)
  const { size } = await stat(parquet)
  console.log(`file: ${rows} rows of parquet (written by DuckDB, snappy), ${(size / 1e6).toFixed(1)} MB`)
  const raw = await timed('raw limit: DuckDB parquet → CSV', 'rows', async () => {
    await duck.run(
      `COPY (SELECT * FROM read_parquet('${parquet}')) TO '${join(dir, 'out.csv')}' (HEADER false)`,
    )
    return rows
  })
  duck.closeSync()
  const counted = { rows: 0 }
  const read = await timed('File source: parquet → CSV', 'rows', async () => {
    await readThroughSource('rentals.parquet', 'parquet', counted)()
    return counted.rows
  })
  console.log(`  rows: ${counted.rows}; ratio (rows/s): ${(raw.wall / read.wall).toFixed(2)}`)
}

async function readFile(format) {
  const path = join(dir, `rentals.${format}`)
  await writeBikehireFile(path, { rows, format })
  const { size } = await stat(path)
  console.log(`file: ${rows} rows of ${format}, ${(size / 1e6).toFixed(1)} MB`)
  const raw = await timed('raw limit: fs read, 4 MiB blocks', 'B', async () => {
    const file = await open(path, 'r')
    let total = 0
    for (;;) {
      const { bytesRead } = await file.read(Buffer.allocUnsafe(4 << 20), 0, 4 << 20, total)
      if (bytesRead === 0) break
      total += bytesRead
    }
    await file.close()
    return total
  })
  const counted = { rows: 0 }
  const read = await timed(
    `File source: ${format} bytes read`,
    'B',
    readThroughSource(`rentals.${format}`, format, counted),
  )
  console.log(
    `  rows: ${counted.rows}, ${(counted.rows / read.wall / 1e6).toFixed(2)} M rows/s wall; ratio (bytes/s): ${(read.result / read.wall / (raw.result / raw.wall)).toFixed(2)}`,
  )
}
