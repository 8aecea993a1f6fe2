/** Rates, ratios and the summary table the benchmarks print. */
import os from 'node:os'
import type { Measured } from './process.js'

export const rowsPerSecond = (rows: number, ms: number): number => rows / (ms / 1000)

export function formatRate(rows: number, ms: number): string {
  return `${Math.round(rowsPerSecond(rows, ms)).toLocaleString('en')} rows/s`
}

export function machineLine(title: string): string {
  const load = os.loadavg().map((l) => l.toFixed(2))
  return `${title} — node ${process.version}, ${os.cpus().length} cores, load average ${load.join(' ')}`
}

export const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** A plain-text table: the first row is the header. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)))
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd()
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n')
}

export const verdict = (ok: boolean): string => (ok ? 'yes' : 'NO')

/** The median ratio of the rounds, with their range. */
export function ratioCell(ratios: readonly number[]): string {
  const range =
    ratios.length > 1 ? ` (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})` : ''
  return `${median(ratios).toFixed(2)}×${range}`
}

/** The runs' median CPU time (user + system). */
export function cpuCell(runs: readonly Pick<Measured, 'cpuMs'>[]): string {
  const cpu = runs.map((run) => run.cpuMs)
  if (cpu.some((c) => c === undefined)) return 'CPU ?'
  return `CPU ${(median(cpu as number[]) / 1000).toFixed(2)} s`
}
