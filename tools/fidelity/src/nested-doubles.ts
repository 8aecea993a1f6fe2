/**
 * A Parquet file whose doubles have no JSON form (NaN, ±Infinity) or lose their sign in a careless
 * one (−0.0), nested in a list, a struct and a map, and −0.0 at the top level. Nested values land
 * as json, which has no NaN: the rule is a string naming the value (`"NaN"`, `"Infinity"`,
 * `"-Infinity"`) or a loud refusal, never `null`; −0.0 stays −0 (a number, or `"-0"` where the
 * destination's json has no negative zero, as PostgreSQL's jsonb).
 */
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { landedCanonical } from './canonical.js'
import type { LandedTable } from './sinks.js'
import { NAMESPACE } from './table.js'

const SELECT = `SELECT 1 AS id, -0.0::DOUBLE AS top,
  [1.5, 'nan'::DOUBLE, 'inf'::DOUBLE, '-inf'::DOUBLE, -0.0::DOUBLE] AS list,
  {'nan': 'nan'::DOUBLE, 'neg_zero': -0.0::DOUBLE} AS struct,
  MAP {'inf': 'inf'::DOUBLE, 'neg_inf': '-inf'::DOUBLE} AS map`

/** What each nested column held, in order of its JSON form (list elements; struct and map values by key). */
const NESTED: Record<string, Record<string, number>> = {
  list: { 0: 1.5, 1: Number.NaN, 2: Number.POSITIVE_INFINITY, 3: Number.NEGATIVE_INFINITY, 4: -0 },
  struct: { nan: Number.NaN, neg_zero: -0 },
  map: { inf: Number.POSITIVE_INFINITY, neg_inf: Number.NEGATIVE_INFINITY },
}

export async function writeNestedDoublesParquet(
  dir: string,
): Promise<{ entry: Record<string, unknown>; env: Record<string, string> }> {
  const file = `${NAMESPACE}.parquet`
  const instance = await DuckDBInstance.create(':memory:')
  try {
    const connection = await instance.connect()
    await connection.run(`COPY (${SELECT}) TO '${path.join(dir, file)}' (FORMAT parquet)`)
    connection.closeSync()
  } finally {
    instance.closeSync()
  }
  return { entry: { File: { path: file, format: 'parquet' } }, env: {} }
}

const NAMES: [number, string][] = [
  [Number.POSITIVE_INFINITY, 'Infinity'],
  [Number.NEGATIVE_INFINITY, '-Infinity'],
]

function nestedProblem(column: string, key: string, held: number, landed: unknown): string | undefined {
  const where = `${column}[${key}]`
  if (Number.isNaN(held) || !Number.isFinite(held)) {
    const name = Number.isNaN(held) ? 'NaN' : (NAMES.find(([n]) => n === held)?.[1] as string)
    return landed === name ? undefined : `${where}: the source held ${name}, landed ${JSON.stringify(landed)}`
  }
  if (Object.is(held, -0))
    return Object.is(landed, -0) || landed === '-0'
      ? undefined
      : `${where}: the source held -0.0, landed ${JSON.stringify(landed)}`
  return landed === held ? undefined : `${where}: the source held ${held}, landed ${JSON.stringify(landed)}`
}

/** A map may arrive as an object or as `[{ key, value }]`: either names each value by its key. */
function entries(json: unknown): Record<string, unknown> {
  if (!Array.isArray(json) || !json.every((e) => e !== null && typeof e === 'object' && 'key' in e)) {
    return json as Record<string, unknown>
  }
  return Object.fromEntries(json.map((e: { key: string; value: unknown }) => [e.key, e.value]))
}

/** Every difference between the landed row and what the file held. */
export function nestedDoublesProblems(landed: LandedTable | undefined): string[] {
  const row = landed?.rows[0]
  if (!landed || !row || landed.rows.length !== 1)
    return [`expected 1 landed row, found ${landed?.rows.length ?? 0}`]
  const cell = (name: string) => row[landed.columns.findIndex((c) => c.name === name)] ?? null
  const problems: string[] = []
  const top = cell('top')
  const topType = landed.columns.find((c) => c.name === 'top')?.type ?? 'double'
  if (top === null || landedCanonical(topType, top) !== '-0')
    problems.push(`top: the source held -0.0, landed ${top}`)
  for (const [column, held] of Object.entries(NESTED)) {
    const text = cell(column)
    if (text === null) {
      problems.push(`${column}: landed NULL`)
      continue
    }
    const value = entries(JSON.parse(text))
    for (const [key, number] of Object.entries(held)) {
      const problem = nestedProblem(column, key, number, value[key])
      if (problem) problems.push(problem)
    }
  }
  return problems
}
