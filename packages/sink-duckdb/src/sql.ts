/** SQL text for DuckDB: quoting and the mapping between schema field types and column types. */
import type { FieldType } from '@skippr/connector-api'

/** Identifiers come from source data, so they are always quoted. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

export function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

/**
 * Timestamps are TIMESTAMPTZ: the contract's values carry an offset, so the instant is kept
 * whatever the reader's time zone. The connection's own TimeZone is UTC (see sink.ts).
 */
const COLUMN_TYPES: Record<FieldType, string> = {
  string: 'VARCHAR',
  int: 'INTEGER',
  long: 'BIGINT',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMPTZ',
  json: 'JSON',
}

const FIELD_TYPES = new Map<string, FieldType>([
  ['VARCHAR', 'string'],
  ['INTEGER', 'int'],
  ['BIGINT', 'long'],
  ['DOUBLE', 'double'],
  ['BOOLEAN', 'boolean'],
  ['DATE', 'date'],
  ['TIMESTAMP WITH TIME ZONE', 'timestamp'],
  ['JSON', 'json'],
])

export function columnType(type: FieldType): string {
  return COLUMN_TYPES[type]
}

/** The field type a column holds, or undefined for a type Skippr never creates (left alone). */
export function fieldTypeOf(dataType: string): FieldType | undefined {
  return FIELD_TYPES.get(dataType)
}

/** What DuckDB's date and timestamp types span, for the error that refuses a value outside. */
const TEMPORAL_RANGES: Partial<Record<FieldType, string>> = {
  date: '5877642 BC to 5881580 AD',
  timestamp: '290309 BC to 294247 AD',
}

/**
 * The CSV reader's type for a field. read_csv turns a TIMESTAMPTZ field it cannot parse into NULL
 * (DuckDB 1.5) and names a field it cannot convert by position only, so dates and timestamps are
 * read as text and cast by `fromCsvText`.
 */
export function csvReadType(type: FieldType): FieldType {
  return type in TEMPORAL_RANGES ? 'string' : type
}

/**
 * The expression turning `column` (read with `csvReadType`) into the field's type: a date or
 * timestamp DuckDB cannot hold (out of its range, or not one at all) stops the statement with an
 * error naming the field and the value (`cannotHold`), never NULL.
 */
export function fromCsvText(column: string, field: { name: string; type: FieldType }): string {
  if (!(field.type in TEMPORAL_RANGES)) return column
  const [before, after] = refusalText(field, columnType(field.type))
  const refusal = `${literal(before)} || ${column} || ${literal(after)}`
  return `COALESCE(${tryFromCsvText(column, field)}, CASE WHEN ${column} IS NOT NULL THEN error(${refusal}) END)`
}

/** `fromCsvText`'s value, NULL where that stops the statement (for the refused-row search). */
export function tryFromCsvText(column: string, field: { type: FieldType }): string {
  return field.type in TEMPORAL_RANGES ? `TRY_CAST(${column} AS ${columnType(field.type)})` : column
}

/**
 * Why the field's column cannot hold `value`, as `fromCsvText`'s error says it; `type` is the
 * column's type when it is not the field's own (changed by hand).
 */
export function cannotHold(field: { name: string; type: FieldType }, value: string, type?: string): string {
  const [before, after] = refusalText(field, type ?? columnType(field.type))
  return `${before}${value}${after}`
}

function refusalText(field: { name: string; type: FieldType }, type: string): [string, string] {
  const range = type === columnType(field.type) ? TEMPORAL_RANGES[field.type] : undefined
  return [
    `column ${ident(field.name)}: DuckDB's ${type} cannot hold '`,
    range ? `' (it spans ${range})` : "'",
  ]
}

/** A struct literal for read_csv/read_json `columns=`: `{'name': 'TYPE', …}`. */
export function columnsStruct(columns: readonly { name: string; type: FieldType }[]): string {
  return `{${columns.map((c) => `${literal(c.name)}: ${literal(columnType(c.type))}`).join(', ')}}`
}
