/**
 * A JSON-lines part's rows encoded straight from its body's bytes, as the general path
 * (part-records.ts, json-members.ts) would encode the cells it decodes: `JsonLine` checks each line
 * and finds its members, a field's value is the last member of its name, and a value whose text is
 * its bytes (a string without escapes, a number, a json field's text) goes to the writer as bytes.
 * A string with escapes is decoded by JSON.parse. A line that is not a JSON object is left to the
 * general path, which names it: this gives up with undefined.
 */
import { isUtf8 } from 'node:buffer'
import { type EncodedRows, partWriter } from './encoded-rows.js'
import { VALUE_REFUSED } from './errors.js'
import { ESCAPED_STRING, JsonLine, NULL_VALUE, PLAIN_STRING } from './json-line.js'
import type { Part } from './part-records.js'
import type { RowBinaryWriter, TargetColumn } from './row-binary.js'
import { valueProblem } from './value-problem.js'

const LF = 10
const SPACE = 32
const TAB = 9
const CR = 13
const UTF8_BOM = [0xef, 0xbb, 0xbf]
const decoder = new TextDecoder('utf-8', { ignoreBOM: true })

export function encodeJsonBody(
  part: Part,
  targets: readonly TargetColumn[],
  key: Uint8Array,
): EncodedRows | undefined {
  const body = part.body
  if (!isUtf8(body)) return undefined
  const names = targets.map((t) => Buffer.from(t.name))
  const line = new JsonLine()
  /** For each target, the member holding its value in the current line, or -1. */
  const members = new Int32Array(targets.length)
  const writer = partWriter(part, key)
  const refused: EncodedRows['refused'] = []
  let rows = 0
  // The general path decodes the body, and TextDecoder drops a byte order mark that starts it.
  let start = UTF8_BOM.every((b, i) => body[i] === b) ? UTF8_BOM.length : 0
  while (start < body.length) {
    const newline = body.indexOf(LF, start)
    const end = newline === -1 ? body.length : newline
    if (!isBlank(body, start, end)) {
      if (!line.read(body, start, end)) return undefined
      findMembers(body, line, targets, names, members)
      const problem = writeLine(body, line, members, targets, writer)
      if (problem) refused.push({ row: rows, error: problem, code: VALUE_REFUSED })
      writer.encoded(key)
      rows++
    }
    start = end + 1
  }
  return { body: writer.bytes(), rows, refused }
}

function isBlank(body: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = body[i]
    if (c !== SPACE && c !== TAB && c !== CR) return false
  }
  return true
}

/** Fills `members`: for each target, its last member in the line (a repeated key keeps its last value). */
function findMembers(
  body: Uint8Array,
  line: JsonLine,
  targets: readonly TargetColumn[],
  names: readonly Uint8Array[],
  members: Int32Array,
): void {
  members.fill(-1)
  for (let m = 0; m < line.count; m++) {
    const start = line.keyStarts[m] as number
    const end = line.keyEnds[m] as number
    if (line.keyEscaped[m]) {
      const key = JSON.parse(decoder.decode(body.subarray(start - 1, end + 1))) as string
      targets.forEach((target, t) => {
        if (target.name === key) members[t] = m
      })
      continue
    }
    // Lines mostly hold the fields in schema order: the member's own position is tried first.
    if (m < names.length && sameBytes(body, start, end, names[m] as Uint8Array)) members[m] = m
    else
      names.forEach((name, t) => {
        if (sameBytes(body, start, end, name)) members[t] = m
      })
  }
}

function sameBytes(body: Uint8Array, start: number, end: number, name: Uint8Array): boolean {
  if (end - start !== name.length) return false
  for (let i = 0; i < name.length; i++) if (body[start + i] !== name[i]) return false
  return true
}

/** Writes the line's values; returns the first one its column cannot hold, as a one-line reason. */
function writeLine(
  body: Uint8Array,
  line: JsonLine,
  members: Int32Array,
  targets: readonly TargetColumn[],
  writer: RowBinaryWriter,
): string | undefined {
  let problem: string | undefined
  for (let t = 0; t < targets.length; t++) {
    const target = targets[t] as TargetColumn
    const m = members[t] as number
    const kind = m === -1 ? NULL_VALUE : (line.kinds[m] as number)
    const start = line.valueStarts[m] as number
    const end = line.valueEnds[m] as number
    // A json field keeps its value's text as written, quotes and escapes included.
    const asText = target.field === 'json' || (kind !== PLAIN_STRING && kind !== ESCAPED_STRING)
    let reason: string | undefined
    if (kind === NULL_VALUE) reason = writer.null(target)
    else if (asText) reason = writer.valueOfBytes(target, body, start, end)
    else if (kind === PLAIN_STRING) reason = writer.valueOfBytes(target, body, start + 1, end - 1)
    else reason = writer.value(target, cellOf(body, start, end, true))
    if (reason !== undefined && problem === undefined)
      problem = valueProblem(target, kind === NULL_VALUE ? null : cellOf(body, start, end, !asText), reason)
  }
  return problem
}

/** A value's cell as the general path has it: a string's value, or the text as written. */
function cellOf(body: Uint8Array, start: number, end: number, unquoted: boolean): string {
  const text = decoder.decode(body.subarray(start, end))
  return unquoted ? (JSON.parse(text) as string) : text
}
