/**
 * DuckDB sink load speed against DuckDB's own `CREATE TABLE … AS SELECT * FROM read_csv(…)` on the
 * same bikehire-shaped rows, in one run. Batches are cut at 10 MB, the runner's default
 * BUFFER_THRESHOLD_BYTES. Run: `node --import tsx bench/load.ts [rows]` (default 1,000,000).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { NamespaceSchema, SinkBatch } from '@skippr/connector-api'
import { DuckdbSink } from '../src/index.js'

const ROWS = Number(process.argv[2] ?? 1_000_000)
const BATCH_BYTES = 10 * 1024 * 1024

const schema: NamespaceSchema = {
  namespace: 'rentals',
  fields: [
    { name: 'rental_id', type: 'long' },
    { name: 'bike_id', type: 'int' },
    { name: 'start_station', type: 'int' },
    { name: 'end_station', type: 'int' },
    { name: 'start_time', type: 'timestamp' },
    { name: 'end_time', type: 'timestamp' },
    { name: 'duration_s', type: 'int' },
    { name: 'member_type', type: 'string' },
    { name: 'distance_km', type: 'double' },
  ],
  primaryKey: ['rental_id'],
}

/** Bikehire-shaped CSV lines (the Sample source's format), cut into ~10 MB bodies. */
function generate(): { bodies: { body: Uint8Array; rows: number }[]; all: string } {
  const encoder = new TextEncoder()
  const bodies: { body: Uint8Array; rows: number }[] = []
  const chunks: string[] = []
  let text = ''
  let rows = 0
  const start = Date.UTC(2024, 0, 1) / 1000
  for (let i = 1; i <= ROWS; i++) {
    const begin = start + i * 37
    const duration = 60 + ((i * 7919) % 7200)
    const line =
      `${i},${(i * 31) % 5000},${(i * 17) % 800},${(i * 13) % 800},` +
      `${new Date(begin * 1000).toISOString().slice(0, 19)}Z,${new Date((begin + duration) * 1000).toISOString().slice(0, 19)}Z,` +
      `${duration},"${i % 3 === 0 ? 'casual' : 'member'}",${((i % 2000) / 100).toFixed(2)}\n`
    text += line
    rows++
    if (text.length >= BATCH_BYTES || i === ROWS) {
      bodies.push({ body: encoder.encode(text), rows })
      chunks.push(text)
      text = ''
      rows = 0
    }
  }
  return { bodies, all: chunks.join('') }
}

const dir = await mkdtemp(path.join(tmpdir(), 'skippr-bench-duckdb-'))
try {
  const { bodies, all } = generate()
  const csvFile = path.join(dir, 'rentals.csv')
  await writeFile(csvFile, `${schema.fields.map((f) => f.name).join(',')}\n${all}`)

  const instance = await DuckDBInstance.create(path.join(dir, 'baseline.duckdb'))
  const conn = await instance.connect()
  let t = performance.now()
  await conn.run(`CREATE TABLE rentals AS SELECT * FROM read_csv('${csvFile}')`)
  const baselineS = (performance.now() - t) / 1000
  conn.closeSync()
  instance.closeSync()

  const sink = new DuckdbSink({ path: 'sink.duckdb', schema: 'main' }, { configDir: dir, dataDir: dir })
  await sink.prepare(schema)
  t = performance.now()
  let seq = 0n
  for (const { body, rows } of bodies) {
    const batch: SinkBatch = {
      id: { pipeline: 'bench', epoch: 'e', seq: ++seq },
      fence: 1n,
      parts: [{ namespace: 'rentals', schemaVersion: 1, format: 'csv', rows, body, schema }],
    }
    const outcome = await sink.write(batch)
    if (outcome.status !== 'landed') throw new Error(`batch ${seq}: ${JSON.stringify(outcome)}`)
  }
  const sinkS = (performance.now() - t) / 1000
  await sink.close()

  const rate = (s: number) => `${Math.round(ROWS / s).toLocaleString('en')} rows/s`
  console.log(`rows: ${ROWS.toLocaleString('en')} in ${bodies.length} batches of ≤10 MB`)
  console.log(`duckdb CTAS read_csv: ${baselineS.toFixed(2)} s, ${rate(baselineS)}`)
  console.log(`skippr DuckdbSink:    ${sinkS.toFixed(2)} s, ${rate(sinkS)}`)
  console.log(`ratio: ${(baselineS / sinkS).toFixed(2)}x (target ≥ 0.5x)`)
} finally {
  await rm(dir, { recursive: true, force: true })
}
