/**
 * A source chunk's rows rewritten from the source's layout into the fields of a schema a user
 * changed (applied.ts): columns dropped, renamed, merged (the first value that is not NULL),
 * reordered, and values of a field whose type was widened to `string` made text. Only namespaces
 * whose schema a user changed pay for it; a chunk already in the fields' layout is kept as it is.
 */
import { csvField, type Field, findKeys, KeyRanges, parseCsv, type RecordFormat } from '@skippr/connector-api'
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

/**
 * JSON lines by name, each value moved as the text it is (findKeys): never through JSON.parse, which
 * would round `9007199254740993` and print `1.50` as `1.5`.
 */
function relayoutJsonl(schema: AppliedSchema, body: Uint8Array): Uint8Array {
  const keys = new KeyRanges()
  let out = ''
  for (let start = 0; start < body.length; ) {
    const newline = body.indexOf(10, start)
    const end = newline === -1 ? body.length : newline
    findKeys(body, start, end, keys)
    start = end + 1
    if (keys.count === 0) continue
    const values = new Map<string, string>()
    for (let k = 0; k < keys.count; k++) {
      const value = decoder.decode(body.subarray(keys.valueStarts[k], keys.valueEnds[k])).trim()
      if (value !== 'null') values.set(keyName(body.subarray(keys.starts[k], keys.ends[k])), value)
    }
    const members: string[] = []
    for (const field of schema.fields) {
      const value = firstValue(sourcesOf(schema, field.name).map((name) => values.get(name) ?? null))
      if (value !== null) members.push(`${JSON.stringify(field.name)}:${asType(value, field)}`)
    }
    out += `{${members.join(',')}}\n`
  }
  return encoder.encode(out)
}

/** A key's bytes between its quotes, unescaped only when it holds an escape. */
function keyName(bytes: Uint8Array): string {
  const text = decoder.decode(bytes)
  return text.includes('\\') ? (JSON.parse(`"${text}"`) as string) : text
}

function firstValue<T>(values: readonly (T | null)[]): T | null {
  for (const value of values) if (value !== null) return value
  return null
}

/**
 * A value's JSON text as a field widened to `string` needs it: a string stays as written, any other
 * value becomes a string of its text (JSON lines are typed; CSV text is text).
 */
function asType(text: string, field: Field): string {
  return field.type !== 'string' || text.startsWith('"') ? text : JSON.stringify(text)
}
