/**
 * SQL text for the query session's DuckDB: quoting, and the column type each schema field type is
 * shown as — the same types the DuckDB sink creates, so a query reads the WAL's rows exactly as
 * they would look once landed there. Timestamps are TIMESTAMPTZ shown in UTC.
 */
import type { Field, FieldType } from '@skippr/connector-api'

/** Names come from source data and skippr.yml, so they are always quoted. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

export function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

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

export function columnType(type: FieldType): string {
  return COLUMN_TYPES[type] ?? 'VARCHAR'
}

/** `{'name': 'TYPE', …}` for the `columns` parameter of read_csv / read_json. */
export function columnsStruct(columns: readonly Pick<Field, 'name' | 'type'>[]): string {
  return `{${columns.map((c) => `${literal(c.name)}: ${literal(columnType(c.type))}`).join(', ')}}`
}
