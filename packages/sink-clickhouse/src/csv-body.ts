/**
 * A CSV part's rows encoded straight from its body's bytes, without a string or an array per value:
 * `CsvCursor` gives each field's byte range, and a field whose text is its bytes as they stand (no
 * doubled quote, nothing cut off by the record before) goes to the writer as bytes
 * (`valueOfBytes`). Any other field is decoded as `parseCsv` reads it. The bytes landed are those
 * the records of part-records.ts give. What that path reports rather than encodes (a body that is
 * not UTF-8 or does not parse, a record with another number of fields, a json field that is not
 * JSON) is left to it: this gives up with undefined.
 */
import { isUtf8 } from 'node:buffer'
import { CsvCursor, NOT_ASCII, NULL_FIELD } from '@skippr/connector-api'
import { type EncodedRows, partWriter } from './encoded-rows.js'
import { VALUE_REFUSED } from './errors.js'
import { isJson, type Part } from './part-records.js'
import type { RowBinaryWriter, TargetColumn } from './row-binary.js'
import { valueProblem } from './value-problem.js'

/** A record the general path must read: it refuses the whole record, naming why. */
const RECORD_PROBLEM = Symbol('record problem')

export function encodeCsvBody(
  part: Part,
  targets: readonly TargetColumn[],
  key: Uint8Array,
): EncodedRows | undefined {
  if (!isUtf8(part.body)) return undefined
  // One column more than the schema's, so that a record with too many fields shows.
  const cursor = new CsvCursor(part.body, targets.length + 1)
  const writer = partWriter(part, key)
  const refused: EncodedRows['refused'] = []
  let rows = 0
  for (;;) {
    const more = nextRecord(cursor)
    if (more === undefined) return undefined
    if (!more) break
    if (cursor.count !== targets.length) return undefined
    const problem = writeRecord(part, cursor, targets, writer)
    if (problem === RECORD_PROBLEM) return undefined
    if (problem) refused.push({ row: rows, error: problem, code: VALUE_REFUSED })
    writer.encoded(key)
    rows++
  }
  return { body: writer.bytes(), rows, refused }
}

/** Whether there was another record; undefined when the body does not parse (an unterminated quote). */
function nextRecord(cursor: CsvCursor): boolean | undefined {
  try {
    return cursor.next()
  } catch {
    return undefined
  }
}

/** Writes the record's values; returns the first one its column cannot hold, as a one-line reason. */
function writeRecord(
  part: Part,
  cursor: CsvCursor,
  targets: readonly TargetColumn[],
  writer: RowBinaryWriter,
): string | typeof RECORD_PROBLEM | undefined {
  const body = part.body
  let problem: string | undefined
  for (let i = 0; i < targets.length; i++) {
    const target = targets[i] as TargetColumn
    const kind = cursor.kinds[i]
    let reason: string | undefined
    if (kind === NULL_FIELD) reason = writer.null(target)
    else if (target.field === 'json' || ((cursor.classes[i] as number) | NOT_ASCII) !== NOT_ASCII) {
      const text = cursor.fieldText(i)
      if (target.field === 'json' && !isJson(text)) return RECORD_PROBLEM
      reason = writer.value(target, text)
    } else reason = writer.valueOfBytes(target, body, cursor.starts[i] as number, cursor.ends[i] as number)
    if (reason !== undefined && problem === undefined)
      problem = valueProblem(target, kind === NULL_FIELD ? null : cursor.fieldText(i), reason)
  }
  return problem
}
