/**
 * Encoders for the two record formats (see batch.ts). Sources that hold rows as values use these;
 * sources that already hold CSV or JSON-lines bytes pass them through untouched.
 */
import type { Field } from './schema.js'

const encoder = new TextEncoder()

/** One JSON object per line. `Date` values become ISO 8601 strings. */
export function encodeJsonl(rows: readonly Record<string, unknown>[]): Uint8Array {
  let text = ''
  for (const row of rows) text += `${JSON.stringify(row)}\n`
  return encoder.encode(text)
}

/** CSV rows with columns in `fields` order: missing or null values are empty, unquoted (NULL). */
export function encodeCsv(rows: readonly Record<string, unknown>[], fields: readonly Field[]): Uint8Array {
  const line = csvLineEncoder(fields)
  let text = ''
  for (const row of rows) text += line(row)
  return encoder.encode(text)
}

const NUMERIC_TYPES = new Set(['int', 'long', 'double'])
const lineEncoders = new WeakMap<readonly Field[], (row: Record<string, unknown>) => string>()

/**
 * One function per schema, compiled once: it reads each field once and inlines the common case of
 * its declared type (a number; a string without quotes), falling back to `csvValue` for the rest,
 * so the bytes are exactly `csvValue`'s. Calling `csvValue` per value costs type tests and a
 * `replaceAll` on every string, which dominates encoding cost for row-object sources.
 */
function csvLineEncoder(fields: readonly Field[]): (row: Record<string, unknown>) => string {
  let line = lineEncoders.get(fields)
  if (line) return line
  // Field names enter the code only as JSON string literals, never as identifiers.
  const reads = fields.map((f, i) => `const v${i} = row[${JSON.stringify(f.name)}];`).join(' ')
  const cells = fields.map((f, i) =>
    NUMERIC_TYPES.has(f.type)
      ? `(typeof v${i} === 'number' ? '' + v${i} : cell(v${i}))`
      : `(typeof v${i} === 'string' && v${i}.indexOf('"') === -1 ? '"' + v${i} + '"' : cell(v${i}))`,
  )
  const body = fields.length === 0 ? "'\\n'" : `${cells.join(" + ',' + ")} + '\\n'`
  line = new Function('cell', `return (row) => { ${reads} return ${body} }`)(csvValue) as (
    row: Record<string, unknown>,
  ) => string
  lineEncoders.set(fields, line)
  return line
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
