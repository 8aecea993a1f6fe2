/**
 * Some fields' values, record by record, and a part cut down to some of its records: what splitting
 * a part by its rows' values needs (object sinks' Hive-style `country=US/` paths). The records are
 * read by the same scanners as Parquet's (`decodeWith`), so a record is found exactly where Parquet
 * finds it; the records chosen keep their bytes as committed, so every value stays as the source
 * wrote it (no number goes through a JavaScript double).
 */
import { recordRanges } from '@skippr/connector-api'
import { QUOTE } from './char-codes.js'
import type { Read, Value } from './field-values.js'
import type { FilePart, PartReader } from './part-reader.js'
import { decodeWith } from './part-rows.js'

/**
 * For each record of `part` (in order, as `recordRanges` counts them), the text of each of `fields`:
 * a CSV field's text, a JSON string's text or another JSON value's source text (`42`, `true`); null
 * for NULL (an empty unquoted CSV field, a missing key, `null`). Every field must be in the part's
 * schema. Throws BadRecordError for a record that is not well-formed or a body that is not UTF-8.
 */
export function fieldTexts(part: FilePart, fields: readonly string[]): (string | null)[][] {
  const reader = textsReader(part, fields)
  const texts: (string | null)[][] = []
  // One cell per field asked for, and one more that the other fields' values are dropped into.
  const row: Value[] = new Array<Value>(fields.length + 1).fill(null)
  decodeWith(reader, {
    row,
    endRow() {
      texts.push(row.slice(0, fields.length) as (string | null)[])
      row.fill(null)
    },
    // The readers take any text: nothing is refused.
    refuseRow() {},
  })
  return texts
}

/**
 * One part per group of `groups`, each holding only the records at its indexes (as `recordRanges`
 * gives them, ascending), each as committed. The part's records are found once for every group.
 */
export function splitRecords(part: FilePart, groups: readonly (readonly number[])[]): FilePart[] {
  const ranges = recordRanges(part.body, part.format)
  const body = Buffer.from(part.body.buffer, part.body.byteOffset, part.body.byteLength)
  const rangeOf = (record: number): [number, number] => {
    const range = ranges[record]
    if (range === undefined) throw new Error(`part ${part.namespace} has no record ${record}`)
    return range
  }
  return groups.map((records) => {
    // Copied into one buffer of the group's size: no object per record.
    let size = 0
    for (const record of records) {
      const [start, end] = rangeOf(record)
      size += end - start + 1
    }
    const out = Buffer.allocUnsafe(size)
    let at = 0
    for (const record of records) {
      const [start, end] = rangeOf(record)
      at += body.copy(out, at, start, end)
      out[at++] = LF
    }
    return { ...part, rows: records.length, body: out }
  })
}

const LF = 10

/** A reader whose columns are `fields` (then one for every other field), each value its text. */
function textsReader(part: FilePart, fields: readonly string[]): PartReader {
  const names = part.schema.fields.map((field) => field.name)
  const missing = fields.find((field) => !names.includes(field))
  // The caller checks the fields against the schema, where it can say what named them.
  if (missing !== undefined)
    throw new Error(`namespace ${part.namespace} has no field ${JSON.stringify(missing)}`)
  const others = fields.length
  const columns = names.map((name) => (fields.includes(name) ? fields.indexOf(name) : others))
  const json = new Map<string, { column: number; read: Read }>()
  fields.forEach((name, column) => {
    json.set(name, { column, read: jsonText })
  })
  return { part, index: 0, columns, csv: columns.map(() => (text: string) => text), json }
}

/** A JSON value's text: a string's characters, any other value's source text. */
function jsonText(raw: string): string {
  if (raw.charCodeAt(0) !== QUOTE) return raw
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1)
}
