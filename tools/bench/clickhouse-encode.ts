/**
 * The ClickHouse sink's own CPU per row: `encodePart` (the RowBinary insert of one batch part) of
 * bikehire rows, in one process and without a server, so what is timed is the sink's parsing and
 * encoding alone. A part of 200,000 and one of 1,000,000 rows, as CSV and as JSON lines; the median
 * of the rounds, wall time beside the process's CPU time (user + system, so GC threads count).
 * No raw limit: the at-least-once bench (at-least-once.ts) compares the whole path against
 * clickhouse-client; this one says where the sink's share of it goes.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench... --filter=@skippr/sink-clickhouse
 * Run:  pnpm --filter @skippr/bench clickhouse-encode [rows…]   (default 200000 1000000)
 * Env:  SKIPPR_BENCH_ROUNDS   rounds per case (default 5)
 *       SKIPPR_BENCH_PROFILE  1: one more run of each case under the inspector's profiler, printing
 *                             its top functions by self time (not counted in the times)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
// The sink's internals, not its API: encodePart is what the sink runs per part before it sends anything.
import { columnTypeOf, encodePart, type Part, type PartContext } from '@skippr/sink-clickhouse'
import { type BikehireFormat, bikehireSchema } from '@skippr/source-sample'
import { bikehireBodies } from './lib/bikehire.js'
import { profileOf } from './lib/in-process-profile.js'
import { machineLine, median, table } from './lib/report.js'

const args = process.argv.slice(2).filter((a) => a !== '--')
const SIZES = args.length > 0 ? args.map(Number) : [200_000, 1_000_000]
const ROUNDS = Number(process.env.SKIPPR_BENCH_ROUNDS ?? 5)
const PROFILE = process.env.SKIPPR_BENCH_PROFILE === '1'
const FORMATS: readonly BikehireFormat[] = ['csv', 'jsonl']
const TOP_FUNCTIONS = 12

/** The columns the sink makes for bikehire: the key not Nullable, the rest Nullable. */
const context: PartContext = {
  index: 0,
  key: 'bench/1/000000000001/0',
  batch: 'bench/1/000000000001',
  table: '`default`.`rentals`',
  columns: bikehireSchema.fields.map((field) => {
    const inKey = bikehireSchema.primaryKey?.includes(field.name) ?? false
    const type = columnTypeOf(field.type)
    return { name: field.name, type, spelled: type, nullable: !inKey, inKey }
  }),
  target: 'ClickHouse at the bench',
}

interface Timed {
  readonly ms: number
  readonly cpuMs: number
}

function encodeOnce(part: Part): Timed {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const encoded = encodePart(part, context)
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  if ('error' in encoded) throw encoded.error
  if (encoded.rows !== part.rows || encoded.refused.length > 0)
    throw new Error(`encoded ${encoded.rows} rows, ${encoded.refused.length} refused, of ${part.rows}`)
  return { ms, cpuMs: (used.user + used.system) / 1000 }
}

const perRow = (ms: number, rows: number) => `${((ms * 1e6) / rows / 1000).toFixed(2)} µs`

console.log(machineLine('@skippr/sink-clickhouse encodePart bench'))
const dir = await mkdtemp(path.join(tmpdir(), 'skippr-bench-ch-encode-'))
try {
  const rows: string[][] = [['part', 'bytes', 'wall (median)', 'CPU (median)', 'CPU per row', 'wall range']]
  for (const size of SIZES)
    for (const format of FORMATS) {
      const [body] = bikehireBodies(size, Number.POSITIVE_INFINITY, format)
      if (body === undefined) throw new Error('no body')
      const part: Part = {
        namespace: 'rentals',
        schemaVersion: 1,
        format,
        body: body.body,
        rows: body.rows,
        schema: bikehireSchema,
      }
      encodeOnce(part) // warm-up: the first run compiles the code
      const runs = Array.from({ length: ROUNDS }, () => encodeOnce(part))
      const ms = median(runs.map((r) => r.ms))
      const cpuMs = median(runs.map((r) => r.cpuMs))
      const walls = runs.map((r) => r.ms)
      rows.push([
        `${size.toLocaleString('en')} ${format}`,
        `${(part.body.length / 1024 / 1024).toFixed(1)} MB`,
        `${(ms / 1000).toFixed(2)} s`,
        `${(cpuMs / 1000).toFixed(2)} s`,
        perRow(cpuMs, size),
        `${(Math.min(...walls) / 1000).toFixed(2)}–${(Math.max(...walls) / 1000).toFixed(2)} s`,
      ])
      if (PROFILE) {
        const top = await profileOf(path.join(dir, `${format}-${size}`), async () => encodeOnce(part))
        console.log(`\nprofile, ${size.toLocaleString('en')} ${format}:`)
        for (const f of top.slice(0, TOP_FUNCTIONS))
          console.log(
            `  ${(f.share * 100).toFixed(1).padStart(5)} %  ${f.ms.toFixed(0).padStart(6)} ms  ${f.name}`,
          )
      }
    }
  console.log(`\n${table(rows)}\n`)
  console.log(`Medians of ${ROUNDS} rounds after one warm-up; CPU is user + system of this process.`)
  console.log(machineLine('done'))
} finally {
  await rm(dir, { recursive: true, force: true })
}
