/**
 * How `skipprd verify` prints its tally: a table, the comparison of each namespace and a last
 * line with the verdict; or, with `--output json`, one object on one line.
 */
import { render } from '../query/render.js'
import { rowsOf } from '../query/result.js'
import type { PipelineTally } from './tally.js'
import type { NamespaceTally } from './verdict.js'

const HEADER = ['namespace', 'source', 'destination', 'duplicates', 'pending', 'deadlettered', 'verdict']
const NUMERIC = HEADER.map((column) => column !== 'namespace' && column !== 'verdict')

export function mismatched(tally: PipelineTally): NamespaceTally[] {
  return tally.namespaces.filter((ns) => ns.verdict === 'mismatch')
}

export async function textReport(tally: PipelineTally, write: (text: string) => void): Promise<void> {
  const shown = (n: number | undefined) => (n === undefined ? 'n/a' : String(n))
  const rows = tally.namespaces.map((ns) => [
    ns.namespace,
    shown(ns.sourceRows),
    shown(ns.destinationRows),
    shown(ns.duplicates),
    String(ns.pendingRows),
    String(ns.deadletterRows),
    ns.verdict,
  ])
  if (rows.length > 0) await render(rowsOf(HEADER, NUMERIC, rows), false, write)
  for (const ns of tally.namespaces) write(`${ns.namespace}: ${ns.verdict}: ${ns.reason}\n`)
  for (const note of tally.notes) write(`note: ${note}\n`)
  write(`${verdictLine(tally)}\n`)
}

function verdictLine(tally: PipelineTally): string {
  const where = `verify: pipeline '${tally.pipeline}'`
  const bad = mismatched(tally)
  if (bad.length > 0) return `${where}: MISMATCH in ${bad.map((ns) => ns.namespace).join(', ')}`
  if (tally.namespaces.length === 0)
    return `${where}: nothing to verify yet (no namespace synced): run sync first`
  const pending = `${tally.pendingBatches} batch(es) pending in the WAL`
  const unchecked = tally.namespaces.filter((ns) => ns.verdict === 'unchecked').length
  const total = tally.namespaces.length
  if (unchecked === total) return `${where}: not verified: the row counts are not supported (${pending})`
  const partly = unchecked > 0 ? `; ${unchecked} not verified` : ''
  return `${where}: ${total - unchecked} namespace(s) match${partly} (${pending})`
}

export function jsonReport(tally: PipelineTally): string {
  const number = (n: number | undefined) => n ?? null
  return `${JSON.stringify({
    pipeline: tally.pipeline,
    ok: mismatched(tally).length === 0,
    pending_batches: tally.pendingBatches,
    namespaces: tally.namespaces.map((ns) => ({
      namespace: ns.namespace,
      source_rows: number(ns.sourceRows),
      destination_rows: number(ns.destinationRows),
      duplicates: number(ns.duplicates),
      pending_rows: ns.pendingRows,
      deadletter_rows: ns.deadletterRows,
      verdict: ns.verdict,
      reason: ns.reason,
    })),
    notes: tally.notes,
  })}\n`
}
