/**
 * The ClickHouse column type of each field type, chosen so that every value lands exactly on 18.16,
 * and which existing column types may widen into which. Dates and timestamps are `String` holding
 * the batch's text: 18.16's `Date` prints 1970-01-01 (day 0) as `0000-00-00` and ends in 2105, and
 * it has no `DateTime64` (its `DateTime` drops the milliseconds).
 */
import type { FieldType } from '@skippr/connector-api'

/** `Enum8` rather than `UInt8`, so that a boolean column widened to `String` reads `true`/`false`. */
export const BOOLEAN_TYPE = "Enum8('false' = 0, 'true' = 1)"

/** The column types this sink creates and writes; a column of any other type is left alone. */
export type ColumnType = 'Int32' | 'Int64' | 'Float64' | 'String' | typeof BOOLEAN_TYPE

const COLUMN_TYPES: Record<FieldType, ColumnType> = {
  int: 'Int32',
  long: 'Int64',
  double: 'Float64',
  boolean: BOOLEAN_TYPE,
  date: 'String',
  timestamp: 'String',
  json: 'String',
  string: 'String',
}

const KNOWN = new Set<string>(Object.values(COLUMN_TYPES))

export function columnTypeOf(type: FieldType): ColumnType {
  return COLUMN_TYPES[type]
}

/** A column as `system.columns` has it: its type without `Nullable(…)`, or undefined for another type. */
export interface Column {
  readonly name: string
  readonly type: ColumnType | undefined
  /** The type as the server spells it, for messages. */
  readonly spelled: string
  readonly nullable: boolean
  readonly inKey: boolean
}

export function parseColumn(name: string, spelled: string, inKey: boolean): Column {
  const inner = /^Nullable\((.*)\)$/.exec(spelled)?.[1]
  const base = inner ?? spelled
  return {
    name,
    type: KNOWN.has(base) ? (base as ColumnType) : undefined,
    spelled,
    nullable: inner !== undefined,
    inKey,
  }
}

/**
 * Whether `MODIFY COLUMN` from `held` to `wanted` keeps every value: Int32 into Int64 or Float64, and
 * anything into String (its text). Int64 never becomes Float64, which would round values past 2^53;
 * such a column stays Int64, and a value it cannot hold is refused.
 */
export function widens(held: ColumnType, wanted: ColumnType): boolean {
  if (held === wanted || held === 'String') return false
  if (wanted === 'String') return true
  return held === 'Int32' && (wanted === 'Int64' || wanted === 'Float64')
}

export function spell(type: ColumnType, nullable: boolean): string {
  return nullable ? `Nullable(${type})` : type
}
