/**
 * Encodes one CSV part of 1M bikehire-like rows (10 columns: ids, timestamps, strings, doubles) as
 * Parquet with `parquetFile`, next to DuckDB's `COPY (SELECT * FROM read_csv(…)) TO '….parquet'`
 * of the same CSV with the same codec, and prints the median wall time, CPU time and peak RSS of 5
 * interleaved rounds. Each measurement runs in a process of its own, so one's memory does not count
 * for the other.
 *
 *   npx tsx bench/parquet.ts [rows] [none|gzip|zstd]
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Field } from '@skippr/connector-api'
import { zstdReady } from '../src/compression.js'
import { COMPRESSIONS, type Compression } from '../src/encoding.js'
import { parquetFile } from '../src/parquet.js'

const FIELDS: Field[] = [
  { name: 'rental_id', type: 'long' },
  { name: 'bike_id', type: 'int' },
  { name: 'start_station', type: 'int' },
  { name: 'end_station', type: 'int' },
  { name: 'start_time', type: 'timestamp' },
  { name: 'end_time', type: 'timestamp' },
  { name: 'duration_s', type: 'int' },
  { name: 'member_type', type: 'string' },
  { name: 'distance_km', type: 'double' },
  { name: 'note', type: 'string' },
]
const DUCKDB_TYPES: Record<string, string> = {
  long: 'BIGINT',
  int: 'INTEGER',
  timestamp: 'TIMESTAMPTZ',
  string: 'VARCHAR',
  double: 'DOUBLE',
}
/** DuckDB's COPY codec for each setting, as parquetFile maps them (none is SNAPPY). */
const DUCKDB_CODECS: Record<Compression, string> = { none: 'snappy', gzip: 'gzip', zstd: 'zstd' }
const ROUNDS = 5

interface Measurement {
  wallMs: number
  cpuMs: number
  /** RSS before the measured work: the process, its libraries, and the part (or DuckDB) loaded. */
  startRssMb: number
  peakRssMb: number
  outputMb: number
}

/** Loaded only where used, so the parquetFile process's memory holds no DuckDB. */
const duckdb = async () => (await import('@duckdb/node-api')).DuckDBInstance

/** A deterministic stream of 32-bit words (mulberry32), so every run encodes the same CSV. */
function words(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
}

/** Contract CSV (no header, LF, strings quoted, NULL empty) of `rows` rentals. */
function bikehireCsv(rows: number): string {
  const next = words(42)
  const first = Date.UTC(2024, 0, 1) / 1000
  const timestamp = (seconds: number, micros: number) =>
    `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`
  const lines: string[] = []
  for (let i = 0; i < rows; i++) {
    const a = next()
    const start = first + i * 40 + (a % 2400)
    const duration = 180 + (next() % 6900)
    const from = 1 + (next() % 800)
    const to = 1 + (next() % 800)
    const member = a % 100 < 68
    const distance = (duration * (member ? 11 : 7)) / 3600
    const n = next() % 10
    const note =
      n === 0 ? '' : n === 1 ? '""' : n === 2 ? '"returned ""late"", docked, ok"' : `"bay ${from}-${to}"`
    lines.push(
      `${i + 1},${1 + (a % 4000)},${from},${to},${timestamp(start, next() % 1_000_000)},` +
        `${timestamp(start + duration, next() % 1_000_000)},${duration},${member ? '"member"' : '"casual"'},` +
        `${distance.toFixed(3)},${note}\n`,
    )
  }
  return lines.join('')
}

function measured(run: () => Promise<string> | string): Promise<Measurement> {
  return (async () => {
    const startRssMb = process.memoryUsage.rss() / 2 ** 20
    const cpu = process.cpuUsage()
    const started = performance.now()
    const output = await run()
    const wallMs = performance.now() - started
    const used = process.cpuUsage(cpu)
    return {
      wallMs,
      cpuMs: (used.user + used.system) / 1000,
      startRssMb,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      outputMb: statSync(output).size / 2 ** 20,
    }
  })()
}

/** One measurement in this process: our encoder, or DuckDB's COPY. */
async function measureOne(
  tool: string,
  csv: string,
  output: string,
  compression: Compression,
): Promise<Measurement> {
  if (tool === 'ours') {
    // Reading the part and loading zstd are not measured: a sink has its parts in memory, and
    // loads zstd once per process.
    const body: Uint8Array = readFileSync(csv)
    const rows = Number(readFileSync(`${csv}.rows`, 'utf8'))
    const part = { namespace: 'rentals', schemaVersion: 1, format: 'csv' as const, rows, body }
    await zstdReady()
    return measured(() => {
      const chunks = parquetFile(
        [{ ...part, schema: { namespace: 'rentals', fields: FIELDS } }],
        FIELDS,
        output,
        'bench',
        compression,
      )
      writeFileSync(output, Buffer.concat(chunks))
      return output
    })
  }
  const instance = await (await duckdb()).create(':memory:')
  const conn = await instance.connect()
  const columns = FIELDS.map((f) => `'${f.name}': '${DUCKDB_TYPES[f.type]}'`).join(', ')
  const result = await measured(async () => {
    await conn.run(
      `COPY (SELECT * FROM read_csv('${csv}', header = false, allow_quoted_nulls = false, columns = {${columns}}))` +
        ` TO '${output}' (FORMAT parquet, COMPRESSION ${DUCKDB_CODECS[compression]})`,
    )
    return output
  })
  conn.closeSync()
  instance.closeSync()
  return result
}

/** The same rows in both files, as DuckDB reads them: the two tools did the same work. */
async function sameRows(a: string, b: string): Promise<boolean> {
  const instance = await (await duckdb()).create(':memory:')
  const conn = await instance.connect()
  const differing = await conn.runAndReadAll(
    `SELECT count(*) AS n FROM ((FROM read_parquet('${a}') EXCEPT ALL FROM read_parquet('${b}'))
      UNION ALL (FROM read_parquet('${b}') EXCEPT ALL FROM read_parquet('${a}')))`,
  )
  conn.closeSync()
  instance.closeSync()
  return differing.getRowObjectsJS()[0]?.n === 0n
}

/** The compression named on the command line; none when it names none. */
function compressionOf(name: string | undefined): Compression {
  if (name === undefined) return 'none'
  if (!(COMPRESSIONS as readonly string[]).includes(name))
    throw new Error(`unknown compression ${name}: name one of ${COMPRESSIONS.join(', ')}`)
  return name as Compression
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  return sorted[Math.floor(sorted.length / 2)]!
}

async function main(): Promise<void> {
  const [mode, tool, csv, output, codec] = process.argv.slice(2)
  if (mode === '--one' && tool && csv && output) {
    process.stdout.write(JSON.stringify(await measureOne(tool, csv, output, compressionOf(codec))))
    return
  }
  const rows = Number(mode ?? 1_000_000)
  const compression = compressionOf(tool)
  const dir = mkdtempSync(path.join(tmpdir(), 'skippr-parquet-bench-'))
  try {
    const csvFile = path.join(dir, 'rentals.csv')
    writeFileSync(csvFile, bikehireCsv(rows))
    writeFileSync(`${csvFile}.rows`, String(rows))
    console.log(
      `${rows} rows, ${(statSync(csvFile).size / 2 ** 20).toFixed(1)} MB of CSV, ${ROUNDS} rounds, ` +
        `compression ${compression}`,
    )
    const script = fileURLToPath(import.meta.url)
    const runs: Record<string, Measurement[]> = { ours: [], duckdb: [] }
    for (let round = 0; round < ROUNDS; round++) {
      for (const tool of round % 2 === 0 ? ['ours', 'duckdb'] : ['duckdb', 'ours']) {
        const out = path.join(dir, `${tool}.parquet`)
        const args = [...process.execArgv, script, '--one', tool, csvFile, out, compression]
        runs[tool]!.push(
          JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' })) as Measurement,
        )
      }
    }
    const summary = (tool: string) => {
      const m = runs[tool]!
      return {
        wallMs: median(m.map((x) => x.wallMs)),
        cpuMs: median(m.map((x) => x.cpuMs)),
        startRssMb: median(m.map((x) => x.startRssMb)),
        peakRssMb: median(m.map((x) => x.peakRssMb)),
        outputMb: median(m.map((x) => x.outputMb)),
      }
    }
    const ours = summary('ours')
    const duckdb = summary('duckdb')
    const line = (name: string, s: Measurement) =>
      `${name.padEnd(12)} wall ${s.wallMs.toFixed(0).padStart(6)} ms   cpu ${s.cpuMs.toFixed(0).padStart(6)} ms   ` +
      `RSS ${s.startRssMb.toFixed(0).padStart(4)} MB at start, ${s.peakRssMb.toFixed(0).padStart(4)} MB peak   ` +
      `file ${s.outputMb.toFixed(1)} MB`
    console.log(line('parquetFile', ours))
    console.log(line('DuckDB COPY', duckdb))
    console.log(
      `ratio (parquetFile / DuckDB): wall ${(ours.wallMs / duckdb.wallMs).toFixed(1)}x, ` +
        `cpu ${(ours.cpuMs / duckdb.cpuMs).toFixed(1)}x`,
    )
    const same = await sameRows(path.join(dir, 'ours.parquet'), path.join(dir, 'duckdb.parquet'))
    console.log(`same rows in both files: ${same}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
