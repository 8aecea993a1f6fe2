/**
 * The first pass over a JSON-lines part (diagnose.ts): read_json over the part's objects, each with
 * its index as a first key, every field read as JSON (which never fails) with `ignore_errors`, so a
 * line it cannot parse comes back without its index; each field is then cast with TRY_CAST, which
 * goes through the same JSON transform as read_json's typed columns. A line that is not an object
 * is refused without DuckDB (`indexedJsonl`).
 */
import type { Field } from '@skippr/connector-api'
import { checked, checkSql, type Diagnosis, fieldChecks, type Refusal } from './checks.js'
import { type IndexedJsonl, indexedJsonl, type RecordRange } from './indexed.js'
import type { Part } from './load.js'
import { readRecords } from './read.js'
import { columnType } from './sql.js'

export async function jsonlRefusals(
  diagnosis: Diagnosis,
  part: Part,
  ranges: readonly RecordRange[],
): Promise<Refusal[]> {
  const key = indexKey(part.schema.fields)
  const all = indexedJsonl(part.body, ranges, key)
  const refusals: Refusal[] = all.notObjects.map((row) => ({
    row,
    error: 'the record is not a JSON object',
    code: 'Invalid Input',
  }))
  const first = await readJsonl(diagnosis, part, key, [all], `range(${ranges.length})`)
  refusals.push(...first.refusals)
  const notObjects = new Set(all.notObjects)
  const unread = first.missing.filter((row) => !notObjects.has(row))
  if (unread.length === 0) return refusals
  // A line read_json cannot parse may take the next one with it (an object left open): each line
  // that came back without its index is read again in a file of its own.
  const alone = unread.map((row) => indexedJsonl(part.body, ranges, key, [row]))
  const again = await readJsonl(diagnosis, part, key, alone, `unnest([${unread.join(', ')}])`)
  refusals.push(...again.refusals)
  for (const row of again.missing)
    refusals.push({
      row,
      error: 'the record is not JSON that DuckDB reads (Malformed JSON)',
      code: 'Invalid Input',
    })
  return refusals
}

/** Reads indexed JSON-lines files: the refused records among `expected`, and those that did not come back. */
async function readJsonl(
  diagnosis: Diagnosis,
  part: Part,
  key: string,
  indexed: readonly IndexedJsonl[],
  expected: string,
): Promise<{ refusals: Refusal[]; missing: number[] }> {
  const fields = part.schema.fields
  const written = await diagnosis.files.write(
    'jsonl',
    indexed.map(({ bytes }) => bytes),
  )
  try {
    const read = [
      { name: key, type: 'long' as const },
      ...fields.map((f) => ({ ...f, type: 'json' as const })),
    ]
    const { raw, from } = readRecords('jsonl', written.paths, read, 'ignore_errors = true')
    const checks = fields.flatMap((field, k) => {
      const column = raw[k + 1]!
      const converts = !READ_AS_IS.has(field.type)
      return fieldChecks(diagnosis, field, {
        raw: column,
        value: fromJson(column, field),
        converts,
        text: asText(column),
      })
    })
    return await checked(diagnosis.conn, checkSql(raw[0]!, raw.slice(1), from, checks, expected), checks)
  } finally {
    await written.release()
  }
}

/** Field types read_json reads from any JSON value. */
const READ_AS_IS = new Set<Field['type']>(['string', 'json'])

/** What read_json's typed column makes of `column` (read as JSON), NULL where it fails. */
function fromJson(column: string, field: Field): string {
  if (field.type === 'json') return column
  if (field.type === 'string') return asText(column)
  return `TRY_CAST(${column} AS ${columnType(field.type)})`
}

/** The string itself, or the JSON text of any other value, as a VARCHAR column reads it. */
function asText(column: string): string {
  return `(${column} ->> '$')`
}

/** A name for the index key that no field has (DuckDB's column names ignore case). */
function indexKey(fields: readonly Field[]): string {
  const names = new Set(fields.map((f) => f.name.toLowerCase()))
  let key = '_skippr_record_index'
  while (names.has(key)) key = `_${key}`
  return key
}
