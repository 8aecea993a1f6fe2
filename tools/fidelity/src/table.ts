/** A generated table: typed columns and the values a source holds, before any format encodes them. */
import type { FieldType } from '@skippr/connector-api'

export type JsonData = null | boolean | number | string | JsonData[] | { [key: string]: JsonData }

/** A timestamp is microseconds since the epoch, or PostgreSQL's infinities. */
export type Timestamp = bigint | 'infinity' | '-infinity'

/** The JavaScript value of each field type: dates are days since 1970-01-01. */
export interface ValueOf {
  string: string
  int: number
  long: bigint
  double: number
  boolean: boolean
  date: number
  timestamp: Timestamp
  json: JsonData
}
export type Value = ValueOf[FieldType]

export interface Column {
  readonly name: string
  readonly type: FieldType
}

/** `null` is SQL NULL; a JSON `null` is only ever nested inside a json value. */
export type Row = readonly (Value | null)[]

export interface Table {
  readonly columns: readonly Column[]
  readonly rows: readonly Row[]
}

/** The namespace every source writes and every sink lands: the file `t.csv`, the table `t`. */
export const NAMESPACE = 't'
/** The column that names each row, where the table has one. */
export const ID = 'id'
