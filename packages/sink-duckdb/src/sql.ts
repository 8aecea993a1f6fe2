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

/** A struct literal for read_csv/read_json `columns=`: `{'name': 'TYPE', …}`. */
export function columnsStruct(columns: readonly { name: string; type: FieldType }[]): string {
  return `{${columns.map((c) => `${literal(c.name)}: ${literal(columnType(c.type))}`).join(', ')}}`
}
