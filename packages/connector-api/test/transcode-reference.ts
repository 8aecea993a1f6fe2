/**
 * The conversion as `transcode` did it before it read CSV bytes directly (csv-to-jsonl.ts): every
 * record decoded into a map of cells, every line built as a string. Kept as the reference its
 * output must match byte for byte (transcode.property.test.ts) and as the bench's baseline.
 */
import type { BatchPart, RecordFormat } from '../src/batch.js'
import { csvField, parseCsv } from '../src/csv.js'
import { BadRecordError } from '../src/errors.js'
import type { Field, NamespaceSchema } from '../src/schema.js'

type Part = BatchPart & { readonly schema: NamespaceSchema }

/** A field's value in neutral form: its CSV text, or the parsed JSON value. */
type Cell = { readonly text: string | null } | { readonly json: unknown }

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/
const BARE_TYPES = new Set(['int', 'long', 'double', 'boolean'])

/** `transcode` as it was: the part's rows in `format`, CSV rows in the columns of `header`. */
export function referenceTranscode(part: Part, format: RecordFormat, header: readonly Field[]): Uint8Array {
  if (part.format === format && (format === 'jsonl' || sameNames(part.schema.fields, header)))
    return part.body
  const rows = decode(part)
  let text = ''
  for (const row of rows) text += format === 'jsonl' ? jsonLine(part, row) : csvLine(part, row, header)
  return encoder.encode(text)
}

function sameNames(a: readonly Field[], b: readonly Field[]): boolean {
  return a.length === b.length && a.every((f, i) => f.name === b[i]?.name)
}

function decode(part: Part): Map<string, Cell>[] {
  const text = decoder.decode(part.body)
  const fields = part.schema.fields
  if (part.format === 'csv') {
    return parseCsvOf(part, text).map(
      (record) => new Map(fields.map((f, i) => [f.name, { text: record[i] ?? null }])),
    )
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, n) => {
      let row: Record<string, unknown>
      try {
        row = JSON.parse(line) as Record<string, unknown>
      } catch (error) {
        throw new BadRecordError(part.namespace, `line ${n + 1} is not a JSON object`, error)
      }
      return new Map(fields.map((f) => [f.name, { json: row[f.name] ?? null }]))
    })
}

function parseCsvOf(part: Part, text: string): (string | null)[][] {
  try {
    return parseCsv(text)
  } catch (error) {
    throw new BadRecordError(part.namespace, 'the CSV body is malformed', error)
  }
}

function jsonLine(part: Part, row: Map<string, Cell>): string {
  const members = part.schema.fields.map(
    (f) => `${JSON.stringify(f.name)}:${jsonValue(part, f, row.get(f.name))}`,
  )
  return `{${members.join(',')}}\n`
}

/** CSV text of a typed field as JSON: numbers and booleans bare, JSON as itself, the rest as strings. */
function jsonValue(part: Part, field: Field, cell: Cell | undefined): string {
  if (!cell || !('text' in cell)) return JSON.stringify(cell?.json ?? null)
  const text = cell.text
  if (text === null) return 'null'
  const valid =
    field.type === 'json'
      ? isJson(text)
      : field.type === 'boolean'
        ? text === 'true' || text === 'false'
        : !BARE_TYPES.has(field.type) || NUMBER.test(text)
  if (!valid)
    throw new BadRecordError(
      part.namespace,
      `${JSON.stringify(text)} is not a valid ${field.type} for field ${field.name}`,
    )
  return field.type === 'json' || BARE_TYPES.has(field.type) ? text : JSON.stringify(text)
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

function csvLine(part: Part, row: Map<string, Cell>, header: readonly Field[]): string {
  const types = new Map(part.schema.fields.map((f) => [f.name, f.type]))
  return `${header.map((f) => csvCell(row.get(f.name), types.get(f.name) ?? f.type)).join(',')}\n`
}

function csvCell(cell: Cell | undefined, type: Field['type']): string {
  if (!cell) return ''
  if ('text' in cell) return csvField(cell.text, BARE_TYPES.has(type))
  const value = cell.json
  if (value === null || value === undefined) return ''
  if (type === 'json' || typeof value === 'object') return csvField(JSON.stringify(value), false)
  return csvField(String(value), typeof value !== 'string')
}
