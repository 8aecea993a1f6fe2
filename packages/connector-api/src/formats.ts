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
  let text = ''
  for (const row of rows) {
    let line = ''
    for (let i = 0; i < fields.length; i++) {
      if (i > 0) line += ','
      line += csvValue(row[(fields[i] as Field).name])
    }
    text += `${line}\n`
  }
  return encoder.encode(text)
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
