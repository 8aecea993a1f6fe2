/**
 * `transcode` against the map-per-record conversion it replaced (test/transcode-reference.ts), on
 * one part of bikehire-like rows: ids, timestamps, strings (some with quotes), doubles and NULLs.
 * Each conversion runs SKIPPR_BENCH_ROUNDS times (default 5), old and new alternating; the median
 * wall and CPU time (this process, user + system) of each is printed, and their ratio. Every
 * round's output is checked to be the same bytes. `npx tsx bench/transcode.ts [rows]`
 * (default 1,000,000).
 */

import type { Field } from '../src/schema.js'
import { transcode } from '../src/transcode.js'
import { referenceTranscode } from '../test/transcode-reference.js'

const ROWS = Number(process.argv[2] ?? 1_000_000)
const ROUNDS = Number(process.env.SKIPPR_BENCH_ROUNDS ?? 5)

const fields: Field[] = [
  { name: 'rental_id', type: 'long' },
  { name: 'bike_id', type: 'int' },
  { name: 'start_station', type: 'string' },
  { name: 'start_time', type: 'timestamp' },
  { name: 'end_time', type: 'timestamp' },
  { name: 'duration_s', type: 'int' },
  { name: 'member_type', type: 'string' },
  { name: 'distance_km', type: 'double' },
  { name: 'rating', type: 'double' },
  { name: 'note', type: 'string' },
]

const STATIONS = ['Hyde Park Corner', 'King\'s Cross "North"', 'Waterloo, Station 3', 'Bank']
const NOTES = ['', 'late return', 'said "great bike"', 'flat tyre, swapped']

/** A deterministic CSV body of `rows` rows of `fields`. */
function bikehireCsv(rows: number): Uint8Array {
  const lines: string[] = []
  const start = Date.UTC(2024, 0, 1)
  for (let i = 0; i < rows; i++) {
    const began = start + i * 37_000
    const duration = 60 + ((i * 7919) % 5400)
    const quoted = (text: string) => `"${text.replaceAll('"', '""')}"`
    lines.push(
      [
        1_000_000_000 + i,
        (i * 31) % 12_000,
        quoted(STATIONS[i % STATIONS.length] as string),
        quoted(new Date(began).toISOString()),
        quoted(new Date(began + duration * 1000).toISOString()),
        duration,
        quoted(i % 3 === 0 ? 'casual' : 'member'),
        ((i * 13) % 2000) / 100,
        i % 4 === 0 ? '' : ((i % 50) / 10).toString(),
        i % 5 === 0 ? '' : quoted(NOTES[i % NOTES.length] as string),
      ].join(','),
    )
  }
  return new TextEncoder().encode(`${lines.join('\n')}\n`)
}

type Convert = (part: Parameters<typeof transcode>[0]) => Uint8Array

interface Times {
  readonly wall: number[]
  readonly cpu: number[]
}

function time(convert: Convert, part: Parameters<typeof transcode>[0], into: Times): Uint8Array {
  const cpu = process.cpuUsage()
  const wall = performance.now()
  const out = convert(part)
  into.wall.push(performance.now() - wall)
  const used = process.cpuUsage(cpu)
  into.cpu.push((used.user + used.system) / 1000)
  return out
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

function compare(
  label: string,
  part: Parameters<typeof transcode>[0],
  old: Convert,
  next: Convert,
): Uint8Array {
  const before: Times = { wall: [], cpu: [] }
  const after: Times = { wall: [], cpu: [] }
  let output = new Uint8Array()
  for (let round = 0; round < ROUNDS; round++) {
    const expected = time(old, part, before)
    output = time(next, part, after)
    if (Buffer.compare(expected, output) !== 0)
      throw new Error(`${label}: the outputs differ in round ${round + 1}`)
  }
  const ms = (n: number) => `${n.toFixed(0).padStart(6)} ms`
  console.log(
    `${label.padEnd(12)} old ${ms(median(before.wall))} wall ${ms(median(before.cpu))} cpu | ` +
      `new ${ms(median(after.wall))} wall ${ms(median(after.cpu))} cpu | ` +
      `${(median(before.wall) / median(after.wall)).toFixed(1)}× wall, ${(median(before.cpu) / median(after.cpu)).toFixed(1)}× cpu`,
  )
  return output
}

const csv = bikehireCsv(ROWS)
const schema = { namespace: 'rentals', fields }
const csvPart = {
  namespace: 'rentals',
  schemaVersion: 1,
  format: 'csv' as const,
  rows: ROWS,
  body: csv,
  schema,
}
console.log(
  `${ROWS.toLocaleString('en')} rows, ${(csv.length / 2 ** 20).toFixed(0)} MiB of CSV, median of ${ROUNDS}`,
)
const jsonl = compare(
  'csv → jsonl',
  csvPart,
  (p) => referenceTranscode(p, 'jsonl', fields),
  (p) => transcode(p, 'jsonl', fields),
)
const jsonlPart = { ...csvPart, format: 'jsonl' as const, body: jsonl }
compare(
  'jsonl → csv',
  jsonlPart,
  (p) => referenceTranscode(p, 'csv', fields),
  (p) => transcode(p, 'csv', fields),
)
