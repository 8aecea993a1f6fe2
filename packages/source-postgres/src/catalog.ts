/**
 * What a table looks like in pg_catalog, mapped onto connector-api field types, plus the SQL that
 * renders each column in the record format (ISO timestamps with `Z`, `true`/`false`).
 */
import type { Field, FieldType, NamespaceSchema } from '@skippr/connector-api'
import pg from 'pg'
import type { TableSpec } from './config.js'
import { TableNotFoundError } from './errors.js'

export interface Column {
  readonly name: string
  readonly type: FieldType
  /** The column's SQL type, e.g. `timestamp with time zone`: saved key values are cast back to it. */
  readonly sqlType: string
  /** The base type's name (`int4`, `timestamptz`), domains resolved. */
  readonly baseType: string
  readonly nullable: boolean
}

export interface TableInfo {
  readonly spec: TableSpec
  /** `"schema"."name"`, quoted. */
  readonly qualified: string
  readonly columns: readonly Column[]
  readonly primaryKey: readonly string[]
}

const COLUMNS_SQL = `
  SELECT a.attname AS name,
         format_type(a.atttypid, a.atttypmod) AS sql_type,
         b.typname AS base_type,
         CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END AS typmod,
         b.typcategory AS category,
         NOT a.attnotnull AS nullable,
         COALESCE(a.attnum = ANY (i.indkey), false) AS in_key,
         array_position(i.indkey::int2[], a.attnum) AS key_position
    FROM pg_attribute a
    JOIN pg_type t ON t.oid = a.atttypid
    JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
    LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
   WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
   ORDER BY a.attnum`

interface ColumnRow {
  name: string
  sql_type: string
  base_type: string
  typmod: number
  category: string
  nullable: boolean
  in_key: boolean
  key_position: number | null
}

export async function readTable(client: pg.Client, spec: TableSpec): Promise<TableInfo> {
  const qualified = `${pg.escapeIdentifier(spec.schema)}.${pg.escapeIdentifier(spec.name)}`
  const { rows } = await client.query<ColumnRow>(COLUMNS_SQL, [qualified])
  if (rows.length === 0) throw new TableNotFoundError(`${spec.schema}.${spec.name}`)
  const columns = rows.map((row) => ({
    name: row.name,
    type: fieldType(row.base_type, row.category, row.typmod),
    sqlType: row.sql_type,
    baseType: row.base_type,
    nullable: row.nullable,
  }))
  const primaryKey = rows
    .filter((row) => row.in_key)
    .sort((a, b) => (a.key_position ?? 0) - (b.key_position ?? 0))
    .map((row) => row.name)
  return { spec, qualified, columns, primaryKey }
}

export function namespaceSchema(table: TableInfo): NamespaceSchema {
  const fields: Field[] = table.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable }))
  return table.primaryKey.length > 0
    ? { namespace: table.spec.name, fields, primaryKey: table.primaryKey }
    : { namespace: table.spec.name, fields }
}

/** numeric(p, s) with p ≤ 15 survives a double; wider or unconstrained numerics stay exact as text. */
const DOUBLE_DIGITS = 15

function fieldType(baseType: string, category: string, typmod: number): FieldType {
  if (category === 'A') return 'string'
  switch (baseType) {
    case 'int2':
    case 'int4':
      return 'int'
    case 'int8':
      return 'long'
    case 'float4':
    case 'float8':
      return 'double'
    case 'numeric':
      return typmod >= 4 && (typmod - 4) >> 16 <= DOUBLE_DIGITS ? 'double' : 'string'
    case 'bool':
      return 'boolean'
    case 'date':
      return 'date'
    case 'timestamp':
    case 'timestamptz':
      return 'timestamp'
    case 'json':
    case 'jsonb':
      return 'json'
    default:
      return 'string'
  }
}

const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`
/** to_char prints a BC year as its plain number: the contract marks it after the date instead. */
const BC_UTC = `'YYYY-MM-DD" (BC) "HH24:MI:SS.US"Z"'`
const BC_DATE = `'YYYY-MM-DD" (BC)"'`

/** The SELECT expression that renders a column as the record format wants it. */
export function outputExpression(column: Column): string {
  const ref = pg.escapeIdentifier(column.name)
  switch (column.baseType) {
    case 'timestamptz':
      return timestampText(`(${ref} AT TIME ZONE 'UTC')`)
    case 'timestamp':
      return timestampText(ref)
    case 'date':
      return `CASE WHEN ${ref} < '0001-01-01' AND isfinite(${ref}) THEN to_char(${ref}, ${BC_DATE}) ELSE ${ref}::text END`
    case 'bool':
      return `${ref}::text`
    default:
      return ref
  }
}

/** to_char gives NULL for ±infinity, which PostgreSQL's own text form spells as the contract does. */
function timestampText(utc: string): string {
  return `CASE WHEN NOT isfinite(${utc}) THEN ${utc}::text
    WHEN ${utc} < '0001-01-01' THEN to_char(${utc}, ${BC_UTC}) ELSE to_char(${utc}, ${ISO_UTC}) END`
}
