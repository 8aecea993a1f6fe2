/**
 * How one part's fields land in the file's columns: each field's header column and the reader of
 * its values, settled once per part so the scanners only look them up, row after row.
 */
import { type BatchPart, type Field, type NamespaceSchema, widenFieldType } from '@skippr/connector-api'
import { jsonReader, type Read, textReader, type Value } from './field-values.js'
import type { RecordRefusal } from './records-refused.js'

/** A batch part with the schema of its rows, as a sink is handed it. */
export type FilePart = BatchPart & { readonly schema: NamespaceSchema }

/**
 * Where a scanner puts a part's rows: cells into `row`, by header column, then `endRow()`. A row
 * with a value the file cannot hold is refused (`refuseRow`) and still ended: the scan goes on.
 */
export interface RowSink {
  /** The row being decoded, by header column; NULL until set. */
  readonly row: Value[]
  endRow(): void
  /** Refuses the row being decoded, which `endRow` then drops; only the row's first refusal counts. */
  refuseRow(refusal: RecordRefusal): void
}

/** The header columns and value readers of one part. */
export interface PartReader {
  readonly part: FilePart
  /** The part's position in the parts being encoded, from 0. */
  readonly index: number
  /** By the part's field index: the header column, and the reader of CSV text. */
  readonly columns: readonly number[]
  readonly csv: readonly Read[]
  /** By field name: the header column, and the reader of a JSON value's source text. */
  readonly json: ReadonlyMap<string, { readonly column: number; readonly read: Read }>
}

/** The reader of `part`, the `index`th of the parts; throws if the header cannot hold one of its fields. */
export function partReader(part: FilePart, index: number, header: readonly Field[]): PartReader {
  const columnOf = new Map(header.map((f, c) => [f.name, c]))
  const columns: number[] = []
  const csv: Read[] = []
  const json = new Map<string, { column: number; read: Read }>()
  for (const field of part.schema.fields) {
    const column = columnOf.get(field.name)
    const type = column === undefined ? undefined : header[column]!.type
    // The caller merges the header from the parts' schemas: a miss here is its bug, not the data's.
    if (column === undefined || type === undefined || widenFieldType(field.type, type) !== type)
      throw new Error(
        `namespace ${part.namespace}: field ${field.name} (${field.type}) of part ${index + 1} has no ` +
          `column in the file's header that holds it; the header must widen every part's schema (widenFieldType)`,
      )
    columns.push(column)
    csv.push(textReader(field.type, type))
    json.set(field.name, { column, read: jsonReader(field.type, type) })
  }
  return { part, index, columns, csv, json }
}
