/**
 * What `skipprd benchmark` prints: each round's line as it ends, then the medians over the rounds and
 * the ratio (skipprd's rows/s over the bulk load's, the median of the rounds' ratios with their range),
 * as tools/bench/e2e.ts prints them; or, with `--output json`, one object.
 */
import type { BenchmarkResult, Load, Round } from './run.js'

/** Every load reported the file's rows. */
export function countsRight(result: BenchmarkResult): boolean {
  return result.rounds.every(
    (round) => round.skipprd.rows === result.rows && (round.bulkLoad?.rows ?? result.rows) === result.rows,
  )
}

const rate = (load: Load): number => load.rows / (load.wallMs / 1000)
const ratioOf = (round: Round): number | undefined =>
  round.bulkLoad && rate(round.skipprd) / rate(round.bulkLoad)
const count = (n: number): string => Math.round(n).toLocaleString('en')
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

function ratios(result: BenchmarkResult): number[] {
  return result.rounds.flatMap((round) => ratioOf(round) ?? [])
}

const bulkName = (result: BenchmarkResult): string => `${result.sinkType} bulk load`

/** The line before the rounds. */
export function headerLine(sink: { entry: string; type: string }, rows: number, rounds: number): string {
  return `skipprd benchmark: ${count(rows)} bikehire rows (a CSV file) into data_sinks.${sink.entry} (${sink.type}), ${rounds} round${rounds === 1 ? '' : 's'}\n`
}

/** A round's line: both loads' rates, times and CPU, and their ratio; a load of other than `rows` says so. */
export function roundLine(rows: number, round: Round, index: number): string {
  const load = (name: string, l: Load) =>
    `${name} ${count(rate(l))} rows/s (${seconds(l.wallMs)}, CPU ${seconds(l.cpuMs)}` +
    `${l.rows === rows ? '' : `, ${count(l.rows)} rows of ${count(rows)}`})`
  const ratio = ratioOf(round)
  return [
    `round ${index + 1}: ${load('skipprd', round.skipprd)}`,
    ...(round.bulkLoad ? [`; ${load('bulk load', round.bulkLoad)}; ratio ${ratio?.toFixed(2)}×`] : []),
  ].join('')
}

/** The summary after the round lines. */
export function textReport(result: BenchmarkResult): string {
  const medianOf = (loads: readonly Load[]) => ({
    rate: median(loads.map(rate)),
    wallMs: median(loads.map((l) => l.wallMs)),
    cpuMs: median(loads.map((l) => l.cpuMs)),
  })
  const row = (name: string, loads: readonly Load[]) => {
    const m = medianOf(loads)
    return [name, `${count(m.rate)} rows/s`, seconds(m.wallMs), seconds(m.cpuMs)]
  }
  const bulkLoads = result.rounds.flatMap((round) => round.bulkLoad ?? [])
  const rows = [
    ['load', 'rate', 'wall', 'CPU'],
    row(
      'skipprd',
      result.rounds.map((round) => round.skipprd),
    ),
    ...(bulkLoads.length > 0 ? [row(bulkName(result), bulkLoads)] : []),
  ]
  const all = ratios(result)
  const lines = [
    '',
    table(rows),
    '',
    ...(all.length > 0
      ? [`ratio (skipprd / ${bulkName(result)}): ${ratioText(all)}`]
      : [`${result.sinkType} has no bulk load to compare with: skipprd's rate is shown alone.`]),
    `Medians of ${result.rounds.length} round${result.rounds.length === 1 ? '' : 's'} of ` +
      `${count(result.rows)} bikehire rows, each load timed alone; CPU is this process's (user + system), ` +
      "a database server's own is not in it.",
    ...(result.left.length > 0
      ? [`Left in data_sinks.${result.sinkEntry}, to drop by hand: ${result.left.join(', ')}`]
      : []),
    ...(countsRight(result)
      ? []
      : [`FAILED: a load did not report ${count(result.rows)} rows (see the rounds above)`]),
  ]
  return `${lines.join('\n')}\n`
}

function ratioText(all: readonly number[]): string {
  const range = all.length > 1 ? ` (${Math.min(...all).toFixed(2)}–${Math.max(...all).toFixed(2)})` : ''
  return `${median(all).toFixed(2)}×${range}`
}

/** A plain-text table: the first row is the header. */
function table(rows: readonly (readonly string[])[]): string {
  const widths = (rows[0] as readonly string[]).map((_, c) =>
    Math.max(...rows.map((r) => (r[c] ?? '').length)),
  )
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => cell.padEnd(widths[c] as number))
      .join('  ')
      .trimEnd()
  return [
    line(rows[0] as string[]),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.slice(1).map(line),
  ].join('\n')
}

/** `--output json`: one object, times in seconds. */
export function jsonReport(result: BenchmarkResult): string {
  const load = (l: Load) => ({
    rows: l.rows,
    rows_per_second: Math.round(rate(l)),
    wall_seconds: l.wallMs / 1000,
    cpu_seconds: l.cpuMs / 1000,
  })
  const medians = (loads: readonly Load[]) =>
    loads.length === 0
      ? null
      : {
          rows_per_second: Math.round(median(loads.map(rate))),
          wall_seconds: median(loads.map((l) => l.wallMs)) / 1000,
          cpu_seconds: median(loads.map((l) => l.cpuMs)) / 1000,
        }
  const all = ratios(result)
  return `${JSON.stringify({
    sink: result.sinkEntry,
    type: result.sinkType,
    rows: result.rows,
    rounds: result.rounds.map((round) => ({
      skipprd: load(round.skipprd),
      bulk_load: round.bulkLoad ? load(round.bulkLoad) : null,
      ratio: ratioOf(round) ?? null,
    })),
    skipprd: medians(result.rounds.map((round) => round.skipprd)),
    bulk_load: medians(result.rounds.flatMap((round) => round.bulkLoad ?? [])),
    ratio: all.length === 0 ? null : { median: median(all), min: Math.min(...all), max: Math.max(...all) },
    left: result.left,
    ok: countsRight(result),
  })}\n`
}
