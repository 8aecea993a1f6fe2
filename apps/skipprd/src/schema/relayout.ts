/**
 * A source chunk's rows rewritten from the source's layout into the fields of a schema a user
 * changed (applied.ts): columns dropped, renamed, merged (the first value that is not NULL),
 * reordered, and values of a field whose type was widened to `string` made text. Only namespaces
 * whose schema a user changed pay for it; a chunk already in the fields' layout is kept as it is.
 */
import { csvField, type Field, parseCsv, type RecordFormat } from '@skippr/connector-api'
import { type AppliedSchema, sourcesOf } from './applied.js'

const BARE_TYPES = new Set(['int', 'long', 'double', 'boolean'])
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** `body` (rows of `format` laid out as `layout`) in the layout of `schema.fields`. */
export function relayout(
  schema: AppliedSchema,
  format: RecordFormat,
  layout: readonly Field[],
  body: Uint8Array,
): Uint8Array {
  if (isSameLayout(schema, format, layout)) return body
  return format === 'csv' ? relayoutCsv(schema, layout, body) : relayoutJsonl(schema, body)
}

/** True when every field is its own source column, of the same type, in the same place (CSV). */
function isSameLayout(schema: AppliedSchema, format: RecordFormat, layout: readonly Field[]): boolean {
  if (schema.fields.length !== layout.length) return false
  const types = new Map(layout.map((f) => [f.name, f.type]))
  return schema.fields.every((field, i) => {
    const sources = sourcesOf(schema, field.name)
    return (
      sources.length === 1 &&
      sources[0] === field.name &&
      types.get(field.name) === field.type &&
      (format === 'jsonl' || layout[i]?.name === field.name)
    )
  })
}

function relayoutCsv(schema: AppliedSchema, layout: readonly Field[], body: Uint8Array): Uint8Array {
  const index = new Map(layout.map((f, i) => [f.name, i]))
  const columns = schema.fields.map((field) => ({
    sources: sourcesOf(schema, field.name).flatMap((name) => index.get(name) ?? []),
    bare: BARE_TYPES.has(field.type),
  }))
  let out = ''
  for (const record of parseCsv(decoder.decode(body))) {
    out += columns
      .map(({ sources, bare }) => csvField(firstValue(sources.map((i) => record[i] ?? null)), bare))
      .join(',')
    out += '\n'
  }
  return encoder.encode(out)
}

function relayoutJsonl(schema: AppliedSchema, body: Uint8Array): Uint8Array {
  let out = ''
  for (const line of decoder.decode(body).split('\n')) {
    if (line.trim() === '') continue
    const row = JSON.parse(line) as Record<string, unknown>
    const next: Record<string, unknown> = {}
    for (const field of schema.fields) {
      const value = firstValue(sourcesOf(schema, field.name).map((name) => row[name] ?? null))
      if (value === null) continue
      next[field.name] = asType(value, field)
    }
    out += `${JSON.stringify(next)}\n`
  }
  return encoder.encode(out)
}

function firstValue<T>(values: readonly (T | null)[]): T | null {
  for (const value of values) if (value !== null) return value
  return null
}

/** A value as a field widened to `string` needs it (JSON lines are typed; CSV text is text). */
function asType(value: unknown, field: Field): unknown {
  if (field.type !== 'string' || typeof value === 'string') return value
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}
