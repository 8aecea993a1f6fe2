/**
 * Field types as BigQuery columns, and what bringing an existing column up to a field's type takes:
 * nothing, BigQuery's own `ALTER COLUMN … SET DATA TYPE` (INT64 to FLOAT64, the one coercion our
 * types need), or a rewrite of the table with the column cast (DATE to TIMESTAMP, anything to
 * STRING), which BigQuery does not coerce in place.
 */
import type { FieldType } from '@skippr/connector-api'

const COLUMN_TYPES: Record<FieldType, string> = {
  string: 'STRING',
  int: 'INT64',
  long: 'INT64',
  double: 'FLOAT64',
  boolean: 'BOOL',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
  json: 'JSON',
}

/** The REST API's legacy names for the same types. */
const ALIASES: Record<string, string> = { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL' }

export function columnType(type: FieldType): string {
  return COLUMN_TYPES[type]
}

/** A type name as the API reports it, in standard-SQL spelling. */
export function standardType(type: string | undefined): string {
  const upper = (type ?? 'STRING').toUpperCase()
  return ALIASES[upper] ?? upper
}

export type Change = 'none' | 'alter' | 'rewrite' | 'refused'

/** What turns a column of type `have` into one holding the field type `want`. */
export function changeFor(have: string, want: FieldType): Change {
  const target = columnType(want)
  if (have === target) return 'none'
  // The column is already wider than the field (a narrower schema arrives after a wider one).
  if (holds(have, target)) return 'none'
  if (have === 'INT64' && target === 'FLOAT64') return 'alter'
  if (have === 'DATE' && target === 'TIMESTAMP') return 'rewrite'
  if (target === 'STRING' && have in CAST_TO_STRING) return 'rewrite'
  return 'refused'
}

/** Whether a column of type `have` holds every value of type `want` as is. */
function holds(have: string, want: string): boolean {
  if (have === 'STRING') return true
  if (have === 'FLOAT64') return want === 'INT64'
  if (have === 'TIMESTAMP') return want === 'DATE'
  return false
}

/** How a column of each type is turned into STRING text in a rewrite. */
const CAST_TO_STRING: Record<string, (column: string) => string> = {
  INT64: (c) => `CAST(${c} AS STRING)`,
  FLOAT64: (c) => `CAST(${c} AS STRING)`,
  BOOL: (c) => `CAST(${c} AS STRING)`,
  DATE: (c) => `CAST(${c} AS STRING)`,
  TIMESTAMP: (c) => `CAST(${c} AS STRING)`,
  JSON: (c) => `TO_JSON_STRING(${c})`,
}

/** The expression of a rewrite that turns `column` (quoted) of type `have` into `want`'s type. */
export function rewriteExpression(column: string, have: string, want: FieldType): string {
  const target = columnType(want)
  if (target === 'STRING') return (CAST_TO_STRING[have] as (c: string) => string)(column)
  return `CAST(${column} AS ${target})`
}
