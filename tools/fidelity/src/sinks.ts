/**
 * The destinations a run lands in, and the landed table read back as text a comparison can trust:
 * integers as digits, dates as days and timestamps as microseconds since the epoch (so no
 * calendar or time zone formatting stands between the value and the test), doubles as the sink
 * prints them exactly.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { FieldType } from '@skippr/connector-api'
import { type Database, envReference } from './postgres.js'
import { NAMESPACE } from './table.js'

export const SINK_KINDS = ['postgres', 'duckdb'] as const
export type SinkKind = (typeof SINK_KINDS)[number]

export interface LandedColumn {
  readonly name: string
  /** The field type the sink's column type stands for (its README's type table). */
  readonly type: FieldType
  /** The destination's own name of the type, for messages. */
  readonly sqlType: string
}

export interface LandedTable {
  readonly columns: readonly LandedColumn[]
  readonly rows: readonly (readonly (string | null)[])[]
}

export interface SinkTarget {
  /** The `data_sinks` entry of skippr.yml. */
  readonly entry: Record<string, unknown>
  readonly env: Record<string, string>
  /** The landed namespace; undefined when the sink never created it. */
  read(): Promise<LandedTable | undefined>
}

const POSTGRES_FIELD_TYPES: Record<string, FieldType> = {
  text: 'string',
  integer: 'int',
  bigint: 'long',
  'double precision': 'double',
  boolean: 'boolean',
  date: 'date',
  'timestamp with time zone': 'timestamp',
  jsonb: 'json',
  json: 'json',
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

function postgresReadBack(name: string, type: FieldType): string {
  const c = quote(name)
  switch (type) {
    case 'date':
      return `CASE WHEN isfinite(${c}) THEN (${c} - DATE '1970-01-01')::text ELSE ${c}::text END`
    case 'timestamp':
      return `CASE WHEN isfinite(${c}) THEN (extract(epoch FROM ${c}) * 1000000)::numeric(40, 0)::text ELSE ${c}::text END`
    default:
      return `${c}::text`
  }
}

export function postgresTarget(database: Database, schema: string): SinkTarget {
  return {
    entry: { Postgres: { connection_string: envReference('FIDELITY_SINK_URL'), schema } },
    env: { FIDELITY_SINK_URL: database.url },
    async read() {
      const { rows: catalog } = await database.pool.query<{ name: string; type: string }>(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns
         WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
        [schema, NAMESPACE],
      )
      if (catalog.length === 0) return undefined
      const columns = catalog.map(({ name, type }) => ({
        name,
        sqlType: type,
        type: fieldType(POSTGRES_FIELD_TYPES, type),
      }))
      const select = columns.map((c) => postgresReadBack(c.name, c.type)).join(', ')
      const result = await database.pool.query({
        text: `SELECT ${select} FROM ${quote(schema)}.${quote(NAMESPACE)}`,
        rowMode: 'array',
      })
      return { columns, rows: result.rows as (string | null)[][] }
    },
  }
}

const DUCKDB_FIELD_TYPES: Record<string, FieldType> = {
  VARCHAR: 'string',
  INTEGER: 'int',
  BIGINT: 'long',
  DOUBLE: 'double',
  BOOLEAN: 'boolean',
  DATE: 'date',
  'TIMESTAMP WITH TIME ZONE': 'timestamp',
  JSON: 'json',
}

function duckdbReadBack(name: string, type: FieldType): string {
  const c = quote(name)
  switch (type) {
    case 'date':
      return `CASE WHEN isinf(${c}) THEN CAST(${c} AS VARCHAR) ELSE CAST(${c} - DATE '1970-01-01' AS VARCHAR) END`
    case 'timestamp':
      return `CASE WHEN isinf(${c}) THEN CAST(${c} AS VARCHAR) ELSE CAST(epoch_us(${c}) AS VARCHAR) END`
    case 'string':
      // As bytes: @duckdb/node-api decodes text with a TextDecoder that drops a leading U+FEFF.
      return `hex(encode(${c}))`
    default:
      return `CAST(${c} AS VARCHAR)`
  }
}

const TEXT = new TextDecoder('utf-8', { ignoreBOM: true })

/** A DuckDB file in the run's directory, opened read-only once skipprd has exited. */
export function duckdbTarget(dir: string): SinkTarget {
  const file = 'warehouse.duckdb'
  return {
    entry: { Duckdb: { path: `./${file}` } },
    env: {},
    async read() {
      if (!existsSync(path.join(dir, file))) return undefined
      const instance = await DuckDBInstance.create(path.join(dir, file), { access_mode: 'READ_ONLY' })
      try {
        const connection = await instance.connect()
        try {
          const catalog = (
            await connection.runAndReadAll(
              `SELECT column_name, data_type FROM information_schema.columns
               WHERE table_schema = 'main' AND table_name = '${NAMESPACE}' ORDER BY ordinal_position`,
            )
          ).getRows() as [string, string][]
          if (catalog.length === 0) return undefined
          const columns = catalog.map(([name, type]) => ({
            name,
            sqlType: type,
            type: fieldType(DUCKDB_FIELD_TYPES, type),
          }))
          const select = columns.map((c) => duckdbReadBack(c.name, c.type)).join(', ')
          const reader = await connection.runAndReadAll(`SELECT ${select} FROM main.${quote(NAMESPACE)}`)
          const rows = (reader.getRowsJS() as (string | null)[][]).map((row) =>
            row.map((cell, i) =>
              cell !== null && columns[i]?.type === 'string' ? TEXT.decode(Buffer.from(cell, 'hex')) : cell,
            ),
          )
          return { columns, rows }
        } finally {
          connection.closeSync()
        }
      } finally {
        instance.closeSync()
      }
    },
  }
}

function fieldType(types: Record<string, FieldType>, sqlType: string): FieldType {
  const type = types[sqlType]
  if (type === undefined)
    throw new Error(`the sink created a column of type ${sqlType}, which no field type maps to`)
  return type
}
