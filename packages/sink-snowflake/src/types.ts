/**
 * Field types as Snowflake columns, and what bringing an existing column up to a field's type
 * takes: nothing, Snowflake's own `ALTER COLUMN … SET DATA TYPE` (a NUMBER's precision raised, the
 * one change it makes in place), or a rewrite of the table with the column cast (NUMBER to FLOAT,
 * DATE to TIMESTAMP_TZ, anything to VARCHAR), which Snowflake does not do in place.
 */
import type { FieldType } from '@skippr/connector-api'

const COLUMN_TYPES: Record<FieldType, string> = {
  string: 'VARCHAR',
  int: 'NUMBER(10,0)',
  long: 'NUMBER(19,0)',
  double: 'FLOAT',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMP_TZ',
  json: 'VARIANT',
}

export function columnType(type: FieldType): string {
  return COLUMN_TYPES[type]
}

/** A type as DESCRIBE TABLE shows it, without the sizes that do not matter here. */
export function baseType(described: string): string {
  const upper = described.toUpperCase()
  if (/^NUMBER\(\d+,0\)$/.test(upper)) return upper
  return upper.replace(/\(.*\)$/, '')
}

export type Change = 'none' | 'alter' | 'rewrite' | 'refused'

const precision = (type: string) => Number(/^NUMBER\((\d+),0\)$/.exec(type)?.[1] ?? Number.NaN)

/** What turns a column of (base) type `have` into one holding the field type `want`. */
export function changeFor(have: string, want: FieldType): Change {
  const target = columnType(want)
  if (have === target) return 'none'
  if (have === 'VARCHAR' || have === 'TEXT' || have === 'STRING') return 'none'
  if (target.startsWith('NUMBER(') && have.startsWith('NUMBER('))
    return precision(have) >= precision(target) ? 'none' : 'alter'
  // Wider columns than the field already hold it (a narrower schema arriving after a wider one).
  if (have === 'FLOAT' && target.startsWith('NUMBER(')) return 'none'
  if (have === 'TIMESTAMP_TZ' && target === 'DATE') return 'none'
  if (target === 'FLOAT' && have.startsWith('NUMBER(')) return 'rewrite'
  if (target === 'TIMESTAMP_TZ' && have === 'DATE') return 'rewrite'
  if (target === 'VARCHAR' && (have.startsWith('NUMBER(') || have in TO_TEXT)) return 'rewrite'
  return 'refused'
}

const TO_TEXT: Record<string, (column: string) => string> = {
  FLOAT: (c) => `CAST(${c} AS VARCHAR)`,
  BOOLEAN: (c) => `CAST(${c} AS VARCHAR)`,
  DATE: (c) => `CAST(${c} AS VARCHAR)`,
  TIMESTAMP_TZ: (c) => `CAST(${c} AS VARCHAR)`,
  VARIANT: (c) => `TO_JSON(${c})`,
}

/** The expression of a rewrite that turns `column` (quoted) of type `have` into `want`'s type. */
export function rewriteExpression(column: string, have: string, want: FieldType): string {
  const target = columnType(want)
  if (target === 'VARCHAR') return (TO_TEXT[have] ?? ((c: string) => `CAST(${c} AS VARCHAR)`))(column)
  return `CAST(${column} AS ${target})`
}
