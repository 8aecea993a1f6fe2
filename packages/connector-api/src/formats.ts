/**
 * Encoders for the two record formats (see batch.ts). Sources that hold rows as values use these;
 * sources that already hold CSV or JSON-lines bytes pass them through untouched.
 */
import type { Field } from './schema.js'
import { TextWriter } from './text-writer.js'

const encoder = new TextEncoder()

/** One JSON object per line. `Date` values become ISO 8601 strings. */
export function encodeJsonl(rows: readonly Record<string, unknown>[]): Uint8Array {
  let text = ''
  for (const row of rows) text += `${JSON.stringify(row)}\n`
  return encoder.encode(text)
}

/** CSV rows with columns in `fields` order: missing or null values are empty, unquoted (NULL). */
export function encodeCsv(rows: readonly Record<string, unknown>[], fields: readonly Field[]): Uint8Array {
  const write = csvRowsWriter(fields)
  // A call made while another is writing (a value's toJSON encoding rows) gets a buffer of its own.
  const writer = new TextWriter(spare ?? new Uint8Array(SPARE_BYTES))
  spare = undefined
  write(rows, writer)
  const body = writer.copy()
  if (writer.buffer.length <= MAX_SPARE_BYTES) spare = writer.buffer
  return body
}

/**
 * The buffer `encodeCsv` writes into, kept between calls so encoding a page of rows allocates only
 * its result. One that grew past MAX_SPARE_BYTES for a large call is left to the collector rather
 * than held for the life of the process.
 */
let spare: Uint8Array | undefined
const SPARE_BYTES = 64 * 1024
const MAX_SPARE_BYTES = 4 * 1024 * 1024

const NUMERIC_TYPES = new Set(['int', 'long', 'double'])
type RowsWriter = (rows: readonly Record<string, unknown>[], writer: TextWriter) => void
const rowsWriters = new WeakMap<readonly Field[], RowsWriter>()

/**
 * One function per schema, compiled once: it reads each field once and inlines the common case of
 * its declared type (a number; a string), handing the rest to `writeCell`, so the bytes are exactly
 * `csvValue`'s. Calling `csvValue` per value costs type tests and a `replaceAll` on every string,
 * and joining the values into one string costs more than writing their bytes.
 */
function csvRowsWriter(fields: readonly Field[]): RowsWriter {
  let write = rowsWriters.get(fields)
  if (write) return write
  // Field names enter the code only as JSON string literals, never as identifiers.
  const cells = fields.map((f, i) => {
    const read = `const v${i} = row[${JSON.stringify(f.name)}];`
    const cell = NUMERIC_TYPES.has(f.type)
      ? `if (typeof v${i} === 'number') w.number(v${i}); else cell(w, v${i});`
      : `if (typeof v${i} === 'string') w.quoted(v${i}); else cell(w, v${i});`
    return `${read} ${cell} w.byte(${i === fields.length - 1 ? NEWLINE : COMMA});`
  })
  const row = fields.length === 0 ? `w.byte(${NEWLINE});` : cells.join('\n')
  write = new Function(
    'cell',
    `return (rows, w) => { for (let r = 0; r < rows.length; r++) { const row = rows[r]; ${row} } }`,
  )(writeCell) as RowsWriter
  rowsWriters.set(fields, write)
  return write
}

const COMMA = 44
const NEWLINE = 10

/** `csvValue(value)` as bytes, with its common cases written without making the string. */
function writeCell(w: TextWriter, value: unknown): void {
  if (value === null || value === undefined) return
  if (typeof value === 'number') w.number(value)
  else if (typeof value === 'string') w.quoted(value)
  // Not a subclass, which may format itself otherwise.
  else if (Object.getPrototypeOf(value) === Date.prototype) w.isoTimestamp(value as Date)
  else w.utf8(csvValue(value))
}

/** One CSV field. Strings are always quoted, so an empty string differs from NULL. */
export function csvValue(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value)
  if (value instanceof Date) return value.toISOString()
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return `"${text.replaceAll('"', '""')}"`
}

/** Counts newline-terminated lines: the row count of a JSON-lines body. */
export function countLines(body: Uint8Array): number {
  let lines = 0
  let at = body.indexOf(10)
  while (at !== -1) {
    lines++
    at = body.indexOf(10, at + 1)
  }
  return lines
}
