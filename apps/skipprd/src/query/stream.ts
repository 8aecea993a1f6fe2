/**
 * `STREAM <columns> FROM <pipeline>.<namespace> [WHERE …] [ORDER BY …] [LIMIT n]`: a live tail of
 * a pipeline's committed WAL rows. It prints the rows pending in the WAL when it starts, then the
 * rows of each batch committed after, as they are committed, until LIMIT rows are printed or it is
 * stopped (Ctrl-C). Every STREAM_POLL_MS it brings the query cache up to a fresh WAL snapshot and
 * selects the rows of the batches loaded since its last look, in commit order (ORDER BY orders the
 * rows of one look). A batch committed and landed between two looks has left the WAL by the second
 * and is not shown: this is a view of the WAL, not of the destination.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { NAME, unquote } from './statements.js'

/** How often a STREAM looks for newly committed batches. */
export const STREAM_POLL_MS = 250

export interface StreamStatement {
  readonly kind: 'stream'
  /** The select list as typed: `*`, `rental_id, bike_id`, `count(*)` is not a tail and fails in DuckDB. */
  readonly columns: string
  readonly pipeline: string
  readonly namespace: string
  readonly where: string | undefined
  readonly orderBy: string | undefined
  readonly limit: number | undefined
}

const STREAM_STATEMENT = new RegExp(
  String.raw`^STREAM\s+(.+?)\s+FROM\s+${NAME}\.${NAME}(?:\s+WHERE\s+(.+?))?(?:\s+ORDER\s+BY\s+(.+?))?(?:\s+LIMIT\s+(\d+))?$`,
  'is',
)

/** The STREAM statement `statement` is (comments stripped, trimmed), or undefined. */
export function parseStreamStatement(statement: string): StreamStatement | undefined {
  const m = STREAM_STATEMENT.exec(statement)
  if (!m) return undefined
  return {
    kind: 'stream',
    columns: (m[1] as string).trim(),
    pipeline: unquote(m[2] as string),
    namespace: unquote(m[3] as string),
    where: m[4]?.trim(),
    orderBy: m[5]?.trim(),
    limit: m[6] === undefined ? undefined : Number(m[6]),
  }
}

/** One look: the rows of the batches after `afterSeq` up to the newest loaded (at most `limit`), and that seq. */
export type Look = (afterSeq: bigint, limit: number | undefined) => Promise<Looked>

export interface Looked {
  readonly rows: (string | null)[][]
  readonly seq: bigint
}

/**
 * The rows of `first` and of every look after it, a chunk per look that found rows, until `limit`
 * rows in all or `signal`.
 */
export async function* tail(
  look: Look,
  first: Looked,
  limit: number | undefined,
  signal: AbortSignal,
): AsyncGenerator<(string | null)[][]> {
  let { seq } = first
  let left = (limit ?? Number.POSITIVE_INFINITY) - first.rows.length
  if (first.rows.length > 0) yield first.rows
  while (left > 0 && !signal.aborted) {
    try {
      await sleep(STREAM_POLL_MS, undefined, { signal })
    } catch {
      return // Stopped while waiting for the next look.
    }
    const found = await look(seq, Number.isFinite(left) ? left : undefined)
    seq = found.seq
    if (found.rows.length === 0) continue
    left -= found.rows.length
    yield found.rows
  }
}
