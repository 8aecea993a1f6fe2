/**
 * The exactly-once check: the destination table holds every row the Sample source generated for
 * (seed, rows) once — the count equals the source's, `rental_id` is unique and its set is the
 * source's (1..rows) — and every landed row equals the generated one, column by column.
 */
import { bikehireRows, type Rental } from '@skippr/source-sample'
import type { Destination, Row } from './destination.js'

export interface Expected {
  readonly rows: number
  readonly seed: number
}

/** Rows compared per query: bounded memory whatever the row count. */
export const PAGE_ROWS = 50_000
/** How many offending ids or rows a problem lists. */
export const EXAMPLES = 5

/** Resolves with the problems found: none means every source row landed exactly once. */
export async function verifyExactlyOnce(destination: Destination, expected: Expected): Promise<string[]> {
  const { table } = destination
  const n = expected.rows
  let counts: Row | undefined
  try {
    ;[counts] = await destination.query(
      `SELECT count(*) AS landed, count(DISTINCT rental_id) AS ids,
         count(DISTINCT rental_id) FILTER (WHERE rental_id BETWEEN 1 AND ${n}) AS known
       FROM ${table}`,
    )
  } catch (error) {
    return [`cannot read ${table} in ${destination.label}: ${(error as Error).message}`]
  }
  const landed = Number(counts?.landed)
  const ids = Number(counts?.ids)
  const known = Number(counts?.known)
  const problems: string[] = []
  if (landed !== n) problems.push(`${landed} rows landed, the source has ${n}`)
  if (landed !== ids) problems.push(`${landed - ids} duplicate rows: ${await duplicates(destination)}`)
  if (known !== n) problems.push(`${n - known} source rows missing: ${await missing(destination, n)}`)
  if (ids !== known) problems.push(`${ids - known} rental_id values the source never generated`)
  if (problems.length > 0) return problems
  return compareValues(destination, expected)
}

async function duplicates(destination: Destination): Promise<string> {
  const rows = await destination.query(
    `SELECT rental_id, count(*) AS copies FROM ${destination.table}
     GROUP BY rental_id HAVING count(*) > 1 ORDER BY rental_id LIMIT ${EXAMPLES}`,
  )
  return rows.map((r) => `rental_id ${r.rental_id} ×${r.copies}`).join(', ')
}

async function missing(destination: Destination, n: number): Promise<string> {
  const rows = await destination.query(
    `SELECT g.i AS rental_id FROM generate_series(1, ${n}) AS g(i)
     WHERE NOT EXISTS (SELECT 1 FROM ${destination.table} t WHERE t.rental_id = g.i)
     ORDER BY 1 LIMIT ${EXAMPLES}`,
  )
  return `rental_id ${rows.map((r) => String(r.rental_id)).join(', ')}`
}

export const COLUMNS = [
  'rental_id',
  'bike_id',
  'start_station',
  'end_station',
  'start_time',
  'end_time',
  'duration_s',
  'member_type',
  'distance_km',
] as const satisfies readonly (keyof Rental)[]

/** The select list of `columns`, timestamps as epoch seconds (what `rowDifference` compares). */
export function selectList(destination: Destination, columns: readonly string[] = COLUMNS): string {
  return columns.map((c) => (c.endsWith('_time') ? `${destination.epochSeconds(c)} AS ${c}` : c)).join(', ')
}

async function compareValues(destination: Destination, expected: Expected): Promise<string[]> {
  const problems: string[] = []
  for (let from = 0; from < expected.rows && problems.length < EXAMPLES; from += PAGE_ROWS) {
    const source = bikehireRows(expected.seed, from, Math.min(PAGE_ROWS, expected.rows - from))
    const landed = await destination.query(
      `SELECT ${selectList(destination)} FROM ${destination.table}
       WHERE rental_id BETWEEN ${from + 1} AND ${from + source.length} ORDER BY rental_id`,
    )
    for (const [i, want] of source.entries()) {
      const difference = rowDifference(landed[i], want)
      if (difference) problems.push(`rental_id ${want.rental_id}: ${difference}`)
      if (problems.length >= EXAMPLES) break
    }
  }
  return problems
}

/** The first column where the landed row differs from the generated one, or undefined. */
export function rowDifference(landed: Row | undefined, want: Rental): string | undefined {
  if (!landed) return 'not landed'
  for (const column of COLUMNS) {
    const expected = column.endsWith('_time') ? Date.parse(want[column] as string) / 1000 : want[column]
    const actual = typeof expected === 'number' ? Number(landed[column]) : landed[column]
    if (actual !== expected) return `${column} is ${String(landed[column])}, the source has ${want[column]}`
  }
  return undefined
}
