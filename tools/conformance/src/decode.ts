import type { Field, RecordFormat } from '@skippr/connector-api'
import { parseCsv } from '@skippr/connector-api'

/**
 * Rows of a body in one of the contract's record formats: CSV fields map to `fields` by position
 * (values stay text, `null` for NULL), JSON-lines objects are parsed as they are.
 */
export function decodeRows(
  body: Uint8Array | string,
  format: RecordFormat,
  fields: readonly Field[],
): Record<string, unknown>[] {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  if (format === 'jsonl') {
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  }
  return parseCsv(text).map((record) => Object.fromEntries(fields.map((f, i) => [f.name, record[i] ?? null])))
}
