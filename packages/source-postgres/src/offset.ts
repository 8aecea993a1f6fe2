/**
 * The source offset: for each table, the key of the last row read.
 *
 *   { "tables": { "orders": { "after": { "updated_at": "2024-05-01 10:00:00+00", "id": "17" } } } }
 *
 * A table's key is its cursor column followed by its primary key columns, so rows that share a
 * cursor value are still totally ordered: resuming reads the rows whose key is greater than
 * `after`, and no row is skipped or read twice at a chunk boundary. Values are PostgreSQL's own
 * text form of the column (read in UTC, exact float digits) and are cast back to the column's type
 * when compared, so a timestamp or a numeric survives the round trip exactly. Keeping the column
 * names lets a changed cursor or primary key be detected instead of silently misread.
 */
import type { JsonValue, SourceOffset } from '@skippr/connector-api'
import { OffsetInvalidError } from './errors.js'

/** Each table's raw position; tables no longer configured keep theirs in case they come back. */
export type Positions = Map<string, JsonValue>

export function parsePositions(from: SourceOffset | undefined): Positions {
  if (from === undefined || from === null) return new Map()
  const tables = isObject(from) ? from.tables : undefined
  if (!isObject(tables)) throw new OffsetInvalidError('it is not of the form { tables: { <name>: ... } }')
  return new Map(Object.entries(tables))
}

export function positionsOffset(positions: Positions): SourceOffset {
  return { tables: Object.fromEntries(positions) }
}

export function positionEntry(keyColumns: readonly string[], values: readonly string[]): JsonValue {
  return { after: Object.fromEntries(keyColumns.map((name, i) => [name, values[i] as string])) }
}

/** The saved key values of `table`, in `keyColumns` order; undefined when it has not been read yet. */
export function keyAfter(
  entry: JsonValue | undefined,
  table: string,
  keyColumns: readonly string[],
): string[] | undefined {
  if (entry === undefined) return undefined
  const after = isObject(entry) ? entry.after : undefined
  if (!isObject(after)) throw new OffsetInvalidError(`the entry for table ${table} has no "after" key`)
  const saved = Object.keys(after)
  const matches = saved.length === keyColumns.length && keyColumns.every((name) => name in after)
  if (!matches)
    throw new OffsetInvalidError(
      `table ${table} was read in the order of (${saved.join(', ')}) but is now read in the order of ` +
        `(${keyColumns.join(', ')})`,
    )
  return keyColumns.map((name) => {
    const value = after[name]
    if (typeof value !== 'string')
      throw new OffsetInvalidError(`the saved ${name} of table ${table} is not a string`)
    return value
  })
}

function isObject(value: unknown): value is { readonly [k: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
