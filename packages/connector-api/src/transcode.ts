/**
 * Turns batch parts into another record format, for sinks whose output format is fixed (files,
 * stdout). A part already in the output format (and, for CSV, with the same columns as the file's
 * header) is copied as bytes; the others are converted with their schema's field types
 * (csv-to-jsonl.ts, csv-to-csv.ts, jsonl-to-csv.ts).
 */
import type { BatchPart, RecordFormat } from './batch.js'
import { csvField } from './csv.js'
import { csvInHeaderColumns } from './csv-to-csv.js'
import { csvToJsonLines } from './csv-to-jsonl.js'
import { jsonLinesToCsv } from './jsonl-to-csv.js'
import type { Field, NamespaceSchema } from './schema.js'

type Part = BatchPart & { readonly schema: NamespaceSchema }

const encoder = new TextEncoder()

/** The CSV header row for `fields`. */
export function csvHeader(fields: readonly Field[]): Uint8Array {
  return encoder.encode(`${fields.map((f) => csvField(f.name, false)).join(',')}\n`)
}

/** The part's rows in `format`; CSV rows follow the columns of `header`. */
export function transcode(part: Part, format: RecordFormat, header: readonly Field[]): Uint8Array {
  if (part.format === format && (format === 'jsonl' || sameNames(part.schema.fields, header)))
    return part.body
  if (part.format === 'jsonl') return jsonLinesToCsv(part, header)
  return format === 'jsonl' ? csvToJsonLines(part) : csvInHeaderColumns(part, header)
}

function sameNames(a: readonly Field[], b: readonly Field[]): boolean {
  return a.length === b.length && a.every((f, i) => f.name === b[i]?.name)
}
