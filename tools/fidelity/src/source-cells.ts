/**
 * What a source held, cell by cell, and how it compares in a landed column's type: a file's field
 * is its text (its type is whatever inference or the configured schema made of it), a typed
 * source's value keeps its own type.
 */
import type { FieldType } from '@skippr/connector-api'
import { textIn, valueIn } from './canonical.js'
import type { Column, Value } from './table.js'

export type SourceCell =
  | { readonly text: string }
  | { readonly json: string }
  | { readonly type: FieldType; readonly value: Value }
  | null

/** The canonical form of `cell` in `type`; undefined when that type cannot hold it exactly. */
export function expectedIn(type: FieldType, cell: Exclude<SourceCell, null>): string | undefined {
  if ('text' in cell) return textIn(type, cell.text)
  if ('json' in cell) return jsonIn(type, cell.json)
  return valueIn(type, cell.type, cell.value)
}

/**
 * A JSON-lines value: a json column holds the value itself; any other column a JSON string's
 * content, or the JSON text of a number, boolean or nested value.
 */
function jsonIn(type: FieldType, json: string): string | undefined {
  if (type === 'json') return textIn(type, json)
  return json.startsWith('"') ? textIn(type, JSON.parse(json) as string) : textIn(type, json)
}

/** The source's form of a cell, for messages. */
export function sourceText(cell: Exclude<SourceCell, null>): string {
  if ('text' in cell) return cell.text
  if ('json' in cell) return cell.json
  return typeof cell.value === 'object' ? JSON.stringify(cell.value) : String(cell.value)
}

/** A source's rows as the comparison needs them: columns by name, cells in column order. */
export interface SourceRows {
  readonly columns: readonly Column[]
  readonly rows: readonly (readonly SourceCell[])[]
}
