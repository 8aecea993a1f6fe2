/**
 * DuckDB sink load speed against DuckDB's own `CREATE TABLE … AS SELECT * FROM read_csv(…)` of the
 * same bikehire rows (the Sample source's), in one run. Batches are cut at 10 MB, the runner's
 * default BUFFER_THRESHOLD_BYTES. Target ≥ 0.5×.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench sink-duckdb [rows]   (default 1,000,000)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { SinkBatch } from '@skippr/connector-api'
import { DuckdbSink } from '@skippr/sink-duckdb'
import { bikehireSchema, writeBikehireFile } from '@skippr/source-sample'
import { bikehireBodies } from './lib/bikehire.js'
import { formatRate, machineLine } from './lib/report.js'

const ROWS = Number(process.argv.slice(2).find((a) => a !== '--') ?? 1_000_000)
const BATCH_BYTES = 10 * 1024 * 1024

console.log(machineLine('@skippr/sink-duckdb bench'))
const dir = await mkdtemp(path.join(tmpdir(), 'skippr-bench-duckdb-'))
try {
  const bodies = bikehireBodies(ROWS, BATCH_BYTES, 'csv')
  const csvFile = path.join(dir, 'rentals.csv')
  await writeBikehireFile(csvFile, { rows: ROWS, format: 'csv' })

  const instance = await DuckDBInstance.create(path.join(dir, 'baseline.duckdb'))
  const conn = await instance.connect()
  let t = performance.now()
  await conn.run(`CREATE TABLE rentals AS SELECT * FROM read_csv('${csvFile}')`)
  const baselineMs = performance.now() - t
  conn.closeSync()
  instance.closeSync()

  const sink = new DuckdbSink({ path: 'sink.duckdb', schema: 'main' }, { configDir: dir, dataDir: dir })
  await sink.prepare(bikehireSchema)
  t = performance.now()
  let seq = 0n
  for (const { body, rows } of bodies) {
    const batch: SinkBatch = {
      id: { pipeline: 'bench', epoch: 'e', seq: ++seq },
      fence: 1n,
      parts: [{ namespace: 'rentals', schemaVersion: 1, format: 'csv', rows, body, schema: bikehireSchema }],
    }
    const outcome = await sink.write(batch)
    if (outcome.status !== 'landed') throw new Error(`batch ${seq}: ${JSON.stringify(outcome)}`)
  }
  const sinkMs = performance.now() - t
  await sink.close()

  console.log(`rows: ${ROWS.toLocaleString('en')} in ${bodies.length} batches of ≤10 MB`)
  console.log(`duckdb CTAS read_csv: ${(baselineMs / 1000).toFixed(2)} s, ${formatRate(ROWS, baselineMs)}`)
  console.log(`skippr DuckdbSink:    ${(sinkMs / 1000).toFixed(2)} s, ${formatRate(ROWS, sinkMs)}`)
  console.log(`ratio: ${(baselineMs / sinkMs).toFixed(2)}x (target ≥ 0.5x)`)
} finally {
  await rm(dir, { recursive: true, force: true })
}
