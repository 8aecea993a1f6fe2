/** Round trips a run cost, by kind, from two snapshots of a fake's request counts. */
import { countsSince } from '@skippr/test-servers'

export type Counts = Readonly<Record<string, number>>

/** Counts a run into `fake` (whose `requestCounts` it snapshots before and after) cost. */
export async function withRoundTrips<T extends object>(
  fake: { requestCounts(): Counts },
  task: () => Promise<T>,
): Promise<T & { roundTrips: Counts }> {
  const before = fake.requestCounts()
  const result = await task()
  return { ...result, roundTrips: countsSince(before, fake.requestCounts()) }
}

/**
 * `kind n/batch, …` for the kinds a run spent at least once per batch, then the rest as
 * `+ kind n` (once-per-run costs: login, DDL, …). Every kind, so nothing is left out.
 */
export function perBatch(counts: Counts, batches: number): string {
  const kinds = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b))
  const each = kinds.filter(([, n]) => n >= batches)
  const once = kinds.filter(([, n]) => n < batches)
  const total = each.reduce((sum, [, n]) => sum + n, 0) / batches
  const cell = each.map(([kind, n]) => `${kind} ${round(n / batches)}`).join(', ')
  const rest = once.map(([kind, n]) => `${kind} ${n}`).join(', ')
  return `${round(total)}/batch: ${cell}${rest ? `; per run: ${rest}` : ''}`
}

const round = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2))
