/**
 * Which rows of a batch DuckDB refuses, after its load failed for the data of some rows (`isRowError`):
 * the `refused` outcome names every one (connector-api's sink.ts), so that the runner sets them aside
 * and writes the rest again under the same identity. Nothing here lands: the failed transaction was
 * rolled back, and trial loads roll back too.
 *
 * 1. One pass over each part's records (diagnose.ts) names the records the load refuses and why.
 * 2. The batch without them is loaded in trial: when it loads, they are the answer.
 * 3. Otherwise each part that still fails is bisected (probe.ts) for records that fail alone, and the
 *    batch is tried again without those too.
 *
 * Undefined when no rows explain the failure (the batch still fails without any that fail alone):
 * the batch keeps the outcome of its error. Only the failure path runs this; a clean landing costs
 * nothing more.
 */
import type { DuckDBConnection } from '@duckdb/node-api'
import type { RefusedRow, SinkBatch } from '@skippr/connector-api'
import { recordRanges } from '@skippr/connector-api'
import { type Refusal, tableColumns } from './checks.js'
import { refusalsInPart } from './diagnose.js'
import { duckdbErrorType, firstParagraph, isRowError } from './errors.js'
import type { RecordRange } from './indexed.js'
import type { LoadFiles, Part } from './load.js'
import { bisect, trialLoad, withRecords } from './probe.js'
import { tableName } from './tables.js'

/** Rounds of trial and bisection: failures are of single records, so one round finds them all. */
const ROUNDS = 3

export interface RefusalSearch {
  readonly conn: DuckDBConnection
  readonly files: LoadFiles
  readonly dbSchema: string
}

export async function refusedRows(
  search: RefusalSearch,
  batch: SinkBatch,
): Promise<RefusedRow[] | undefined> {
  const parts = batch.parts
  const ranges = parts.map((part) => recordRanges(part.body, part.format))
  const refused = parts.map(() => new Map<number, Refusal>())
  for (const [i, part] of parts.entries())
    for (const refusal of await diagnosed(search, part, ranges[i]!)) refused[i]!.set(refusal.row, refusal)

  const rest = (i: number) => [...ranges[i]!.keys()].filter((row) => !refused[i]!.has(row))
  for (let round = 0; round < ROUNDS; round++) {
    const failure = await trial(
      search,
      parts.map((part, i) => withRecords(part, ranges[i]!, rest(i))),
    )
    if (failure === undefined) return answer(refused)
    let more = false
    for (const [i, part] of parts.entries()) {
      const table = tableName(search.dbSchema, part.namespace)
      const tryRows = (rows: readonly number[]) => trial(search, [withRecords(part, ranges[i]!, rows)])
      for (const [row, error] of await bisect(tryRows, rest(i))) {
        refused[i]!.set(row, {
          row,
          error: `table ${table}: ${firstParagraph(error)}`,
          code: duckdbErrorType(error) ?? 'Error',
        })
        more = true
      }
    }
    if (!more) return undefined
  }
  return undefined
}

/** The first pass; a pass that fails (a column type it cannot name) leaves the part to the bisection. */
async function diagnosed(
  search: RefusalSearch,
  part: Part,
  ranges: readonly RecordRange[],
): Promise<Refusal[]> {
  const table = tableName(search.dbSchema, part.namespace)
  try {
    const columns = await tableColumns(search.conn, search.dbSchema, part.namespace)
    return await refusalsInPart({ ...search, table, columns }, part, ranges)
  } catch {
    return []
  }
}

/** A trial load's row error, or undefined when it loads; any other failure is thrown. */
async function trial(search: RefusalSearch, parts: readonly Part[]): Promise<unknown> {
  const error = await trialLoad(search.conn, search.files, search.dbSchema, parts)
  if (error !== undefined && !isRowError(error)) throw error
  return error
}

function answer(refused: readonly ReadonlyMap<number, Refusal>[]): RefusedRow[] | undefined {
  const rows = refused.flatMap((found, part) =>
    [...found.values()]
      .sort((a, b) => a.row - b.row)
      .map(({ row, error, code }) => ({ part, row, error, code })),
  )
  return rows.length > 0 ? rows : undefined
}
