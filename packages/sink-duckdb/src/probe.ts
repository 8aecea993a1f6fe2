/**
 * Trial loads for the search for refused rows (refusals.ts): parts, or some records of a part,
 * loaded as the sink loads them in a transaction that always rolls back, so nothing lands and the
 * identity is not recorded; and a bisection that finds the records a load refuses by such trials.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import type { RecordRange } from './indexed.js'
import { byTable, type LoadFiles, loadParts, type Part } from './load.js'
import { tableName } from './tables.js'

const NEWLINE = Uint8Array.of(0x0a)

/** Loads `parts` and rolls back: DuckDB's error, or undefined when every part loads. */
export async function trialLoad(
  conn: DuckDBConnection,
  files: LoadFiles,
  dbSchema: string,
  parts: readonly Part[],
): Promise<unknown> {
  const spooled = await files.spool(parts)
  try {
    await conn.run('BEGIN TRANSACTION')
    try {
      for (const group of byTable(parts))
        await loadParts(conn, tableName(dbSchema, group[0]!.namespace), group, spooled.paths)
      return undefined
    } catch (error) {
      return error
    } finally {
      await conn.run('ROLLBACK')
    }
  } finally {
    await spooled.release()
  }
}

/** `part` holding only its records `rows` (indexes into `ranges`, in order). */
export function withRecords(part: Part, ranges: readonly RecordRange[], rows: readonly number[]): Part {
  const pieces = rows.flatMap((row) => [part.body.subarray(...ranges[row]!), NEWLINE])
  return { ...part, body: Buffer.concat(pieces), rows: rows.length }
}

/**
 * The records among `rows` that a trial load refuses alone, each with the error it gives: halves
 * that load are dropped, halves that do not are split again. Only a record that fails on its own is
 * named, so a failure that needs two records together (a key both repeat) names neither. `failed`
 * is the error of `rows` loaded together, when known.
 */
export async function bisect(
  trial: (rows: readonly number[]) => Promise<unknown>,
  rows: readonly number[],
  failed?: unknown,
): Promise<Map<number, unknown>> {
  const found = new Map<number, unknown>()
  const search = async (some: readonly number[], error: unknown): Promise<void> => {
    if (error === undefined) return
    if (some.length === 1) {
      found.set(some[0]!, error)
      return
    }
    const middle = some.length >>> 1
    const [left, right] = [some.slice(0, middle), some.slice(middle)]
    const before = found.size
    await search(left, await trial(left))
    // The left half loaded whole, so the right half holds what failed: it is split without a trial
    // of its own, unless it is one record, which must fail alone to be named.
    const leftLoaded = found.size === before && right.length > 1
    await search(right, leftLoaded ? error : await trial(right))
  }
  await search(rows, failed ?? (await trial(rows)))
  return found
}
