/**
 * PostgreSQL sink load speed: `PostgresSink.write` in ~10 MB batches (the runner's default
 * BUFFER_THRESHOLD_BYTES) against `psql \copy` of the same rows from a CSV file into an identical
 * table, interleaved round by round in one run. The rows are the Sample source's bikehire rows.
 * Target (issue 5): ≥ 0.8× `psql \copy`.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench sink-postgres [rows] [csv|jsonl]   (default 1,000,000 csv)
 *       jsonl sends the same rows as JSON lines (the sink's server-side path) against the CSV \copy.
 * Env:  SKIPPR_BENCH_ROUNDS  rounds (default 3);  SKIPPR_TEST_PG_URL  the server (default: local `test`)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type NamespaceSchema, silentLogger } from '@skippr/connector-api'
import { PostgresSink } from '@skippr/sink-postgres'
import { bikehireSchema, writeBikehireFile } from '@skippr/source-sample'
import { bikehireBodies } from './lib/bikehire.js'
import { countRows, freshSchema, PG_URL, psqlCopy } from './lib/postgres.js'
import { formatRate, machineLine, median } from './lib/report.js'

const args = process.argv.slice(2).filter((a) => a !== '--')
const ROWS = Number(args[0] ?? 1_000_000)
const FORMAT = args[1] === 'jsonl' ? 'jsonl' : 'csv'
const ROUNDS = Number(process.env.SKIPPR_BENCH_ROUNDS ?? 3)
const BATCH_BYTES = 10 * 1024 * 1024

console.log(machineLine('@skippr/sink-postgres bench'))
const dir = await mkdtemp(path.join(tmpdir(), 'skippr-bench-pg-'))
const schema = await freshSchema('skippr_bench_pg')
const sink = new PostgresSink({ connection_string: PG_URL, schema: schema.name }, silentLogger)
const times = { psql: [] as number[], sink: [] as number[] }
try {
  const csvFile = path.join(dir, 'rentals.csv')
  await writeBikehireFile(csvFile, { rows: ROWS, format: 'csv', header: false })
  const bodies = bikehireBodies(ROWS, BATCH_BYTES, FORMAT)
  const namespace = (name: string): NamespaceSchema => ({ ...bikehireSchema, namespace: name })
  for (let round = 0; round < ROUNDS; round++) {
    // The sink's own DDL makes the \copy table: both sides load into identical tables.
    const psqlTable = namespace(`psql_${round}`)
    await sink.prepare(psqlTable)
    times.psql.push((await psqlCopy(`"${schema.name}"."${psqlTable.namespace}"`, csvFile, false)).ms)

    const sinkTable = namespace(`sink_${round}`)
    await sink.prepare(sinkTable)
    const started = performance.now()
    let seq = 0n
    for (const { body, rows } of bodies) {
      const outcome = await sink.write({
        id: { pipeline: `bench_${round}`, epoch: 'e', seq: ++seq },
        fence: 1n,
        parts: [
          { namespace: sinkTable.namespace, schemaVersion: 1, format: FORMAT, rows, body, schema: sinkTable },
        ],
      })
      if (outcome.status !== 'landed') throw new Error(`batch ${seq}: ${JSON.stringify(outcome)}`)
    }
    times.sink.push(performance.now() - started)
    for (const table of [psqlTable, sinkTable]) {
      const landed = await countRows(schema.client, `"${schema.name}"."${table.namespace}"`)
      if (landed !== ROWS) throw new Error(`${table.namespace}: ${landed} rows, expected ${ROWS}`)
    }
  }
} finally {
  await sink.close()
  await schema.drop()
  await rm(dir, { recursive: true, force: true })
}
const best = (xs: number[]) => Math.min(...xs)
const line = (name: string, xs: number[]) =>
  `${name}: best ${best(xs).toFixed(0)} ms (${formatRate(ROWS, best(xs))}), median ${median(xs).toFixed(0)} ms, all ${xs.map((x) => x.toFixed(0)).join(' ')}`
console.log(`rows: ${ROWS.toLocaleString('en')}, sink format ${FORMAT}, ${ROUNDS} rounds, batches of ~10 MB`)
console.log(line('psql \\copy ', times.psql))
console.log(line('sink write ', times.sink))
console.log(
  `ratio (psql time / sink time): best ${(best(times.psql) / best(times.sink)).toFixed(2)}x, median ${(median(times.psql) / median(times.sink)).toFixed(2)}x (target ≥ 0.8x)`,
)
