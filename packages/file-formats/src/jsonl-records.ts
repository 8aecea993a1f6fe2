/**
 * JSON-lines records: every line holding more than spaces, tabs or a CR is one JSON object (as
 * connector-api's countRecords counts them); a missing key or `null` is NULL, keys outside the
 * schema are ignored, a repeated key's last value counts (as in JSON.parse). A record is cut into
 * its members' source text after `JSON.parse` has proved the line valid, so `9223372036854775807`
 * and a `json` field's nested value reach the value readers as written, not rounded or reformatted.
 */
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  CR,
  LF,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  SPACE,
  TAB,
} from './char-codes.js'
import type { PartReader, RowSink } from './part-reader.js'
import { cut, malformed, Refused, refusal } from './refusal.js'

/** Puts the rows of a part's JSON-lines `text` into `out`; returns how many there were. */
export function decodeJsonl(text: string, reader: PartReader, out: RowSink): number {
  let row = 0
  let start = 0
  while (start < text.length) {
    const newline = text.indexOf('\n', start)
    const end = newline === -1 ? text.length : newline
    if (!isBlank(text, start, end)) {
      row++
      decodeJsonLine(text.slice(start, end), row, reader, out)
      out.endRow()
    }
    start = end + 1
  }
  return row
}

function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c !== SPACE && c !== TAB && c !== CR) return false
  }
  return true
}

/** Sets the row's cells from the members of the JSON object in `line`, each from its source text. */
function decodeJsonLine(line: string, row: number, reader: PartReader, out: RowSink): void {
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch {
    throw malformed(reader, row, 'is not a JSON object')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw malformed(reader, row, 'is not a JSON object')
  // The line is valid JSON: the scan below only finds where its members start and end.
  let i = skipSpace(line, line.indexOf('{') + 1)
  while (line.charCodeAt(i) === QUOTE) {
    const keyEnd = stringEnd(line, i)
    const key = jsonString(line.slice(i, keyEnd))
    const valueStart = skipSpace(line, skipSpace(line, keyEnd) + 1)
    const valueEnd = jsonValueEnd(line, valueStart)
    setMember(key, line.slice(valueStart, valueEnd), row, reader, out)
    i = skipSpace(line, valueEnd)
    if (line.charCodeAt(i) === COMMA) i = skipSpace(line, i + 1)
  }
}

/**
 * Sets the cell of member `key` from its value's source text `raw`, if the schema has the key; a
 * value its column cannot hold refuses the row.
 */
function setMember(key: string, raw: string, row: number, reader: PartReader, out: RowSink): void {
  const target = reader.json.get(key)
  if (!target) return
  try {
    out.row[target.column] = raw === 'null' ? null : target.read(raw)
  } catch (error) {
    if (!(error instanceof Refused)) throw error
    const field = reader.part.schema.fields.findIndex((f) => f.name === key)
    // Shown as written: the source text of a JSON value already says whether it is a string.
    out.refuseRow(refusal(reader, row, field, cut(raw), error.message))
  }
}

function skipSpace(text: string, from: number): number {
  let i = from
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c !== SPACE && c !== TAB && c !== CR && c !== LF) break
  }
  return i
}

/** The end (after the closing quote) of the JSON string opening at `from`. */
function stringEnd(text: string, from: number): number {
  let i = from + 1
  for (let c = text.charCodeAt(i); c !== QUOTE; c = text.charCodeAt(i)) i += c === BACKSLASH ? 2 : 1
  return i + 1
}

/** The end of the JSON value starting at `from`: a string, an object or array, or a literal. */
function jsonValueEnd(text: string, from: number): number {
  const first = text.charCodeAt(from)
  if (first === QUOTE) return stringEnd(text, from)
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return containerEnd(text, from)
  let i = from
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === COMMA || c === CLOSE_BRACE || c === SPACE || c === TAB || c === CR || c === LF) break
  }
  return i
}

/** The end of the object or array opening at `from`: after the bracket that closes it. */
function containerEnd(text: string, from: number): number {
  let depth = 0
  let i = from
  for (;;) {
    const c = text.charCodeAt(i)
    // A string may hold brackets: it is skipped whole.
    if (c === QUOTE) {
      i = stringEnd(text, i)
      continue
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1
    i++
  }
}

/** The string a JSON string literal (with its quotes) denotes. */
function jsonString(literal: string): string {
  return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1)
}
