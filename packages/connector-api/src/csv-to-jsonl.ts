/**
 * CSV parts as JSON lines, written from the CSV bytes. A number, a boolean or a plain ASCII string
 * is copied as it is (a string between quotes); only a field that needs JSON escapes, is not ASCII
 * or is JSON text becomes a string. Decoding every record into strings and joining the members
 * took 8 µs per bikehire row, most of it making and collecting the intermediate strings.
 */
import type { BatchPart } from './batch.js'
import { ByteWriter } from './byte-writer.js'
import { parseCsv } from './csv.js'
import { CsvCursor, NEEDS_ESCAPE, NULL_FIELD, PLAIN, QUOTED_FIELD } from './csv-cursor.js'
import { BadRecordError } from './errors.js'
import type { Field, NamespaceSchema } from './schema.js'

type Part = BatchPart & { readonly schema: NamespaceSchema }

/** How a field's CSV text becomes its JSON value: a JSON string, ... */
const TEXT = 0
/** ... a JSON number: the text if it is one, ... */
const NUMBER = 1
/** ... `true` or `false`, ... */
const BOOLEAN = 2
/** ... or the text if it is JSON. */
const JSON_TEXT = 3
type Shape = typeof TEXT | typeof NUMBER | typeof BOOLEAN | typeof JSON_TEXT

const SHAPES: Record<Field['type'], Shape> = {
  string: TEXT,
  date: TEXT,
  timestamp: TEXT,
  int: NUMBER,
  long: NUMBER,
  double: NUMBER,
  boolean: BOOLEAN,
  json: JSON_TEXT,
}

/** One member of every line: its key, the column its value is read from and the value's shape. */
interface Member {
  readonly field: Field
  /** `{"name":` for the first member, `,"name":` for the others. */
  readonly key: Uint8Array
  /** The last column of that name: records were maps by field name, the last field setting it. */
  readonly column: number
  readonly shape: Shape
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const members = new WeakMap<readonly Field[], readonly Member[]>()

const QUOTE = 34
const BACKSLASH = 92
const NEWLINE = 10
const CLOSE_BRACE = 125
const NULL = encoder.encode('null')
const OPEN_BRACE = 123
/** JSON.stringify's short escapes of control characters; the others are `\u00xx`. */
const SHORT_ESCAPES: Record<number, number> = { 8: 98, 9: 116, 10: 110, 12: 102, 13: 114 }
const HEX = '0123456789abcdef'

/** The part's CSV records as JSON lines: one object per record with a member per schema field. */
export function csvToJsonLines(part: Part): Uint8Array {
  const line = membersOf(part.schema.fields)
  const columns = line.reduce((most, m) => Math.max(most, m.column + 1), 0)
  const records = new CsvCursor(part.body, columns)
  const out = new ByteWriter(2 * part.body.length)
  while (nextRecord(part, records)) {
    if (line.length === 0) out.byte(OPEN_BRACE)
    for (const member of line) {
      out.all(member.key)
      writeValue(part, member, records, out)
    }
    out.byte(CLOSE_BRACE)
    out.byte(NEWLINE)
  }
  return out.copy()
}

function membersOf(fields: readonly Field[]): readonly Member[] {
  let line = members.get(fields)
  if (line) return line
  line = fields.map((field, i) => ({
    field,
    key: encoder.encode(`${i === 0 ? '{' : ','}${JSON.stringify(field.name)}:`),
    column: fields.findLastIndex((f) => f.name === field.name),
    shape: SHAPES[field.type],
  }))
  members.set(fields, line)
  return line
}

function nextRecord(part: Part, records: CsvCursor): boolean {
  try {
    return records.next()
  } catch (error) {
    throw malformed(part, error)
  }
}

function malformed(part: Part, error: unknown): BadRecordError {
  return new BadRecordError(part.namespace, 'the CSV body is malformed', error)
}

function writeValue(part: Part, member: Member, records: CsvCursor, out: ByteWriter): void {
  const column = member.column
  if (column >= records.count || records.kinds[column] === NULL_FIELD) {
    out.all(NULL)
    return
  }
  const body = part.body
  const start = records.starts[column] as number
  const end = records.ends[column] as number
  const plain = records.classes[column] === PLAIN
  switch (member.shape) {
    case TEXT:
      if (plain) {
        out.byte(QUOTE)
        out.range(body, start, end)
        out.byte(QUOTE)
      } else if (records.classes[column] === NEEDS_ESCAPE) writeEscaped(records, column, body, out)
      else out.utf8(JSON.stringify(records.fieldText(column)))
      return
    case NUMBER:
      if (!isNumber(body, start, end)) refuse(part, member.field, records.fieldText(column))
      out.range(body, start, end)
      return
    case BOOLEAN:
      if (!isBoolean(body, start, end)) refuse(part, member.field, records.fieldText(column))
      out.range(body, start, end)
      return
    case JSON_TEXT: {
      const text = records.fieldText(column)
      if (!isJson(text)) refuse(part, member.field, text)
      out.utf8(text)
    }
  }
}

/** An ASCII field as `JSON.stringify` writes its text, a doubled quote of a quoted field being one quote. */
function writeEscaped(records: CsvCursor, column: number, body: Uint8Array, out: ByteWriter): void {
  const end = records.ends[column] as number
  const quoted = records.kinds[column] === QUOTED_FIELD
  out.byte(QUOTE)
  for (let i = records.starts[column] as number; i < end; i++) {
    const c = body[i] as number
    if (c === QUOTE || c === BACKSLASH) {
      out.byte(BACKSLASH)
      out.byte(c)
      if (c === QUOTE && quoted) i++
    } else if (c >= 0x20) out.byte(c)
    else writeControl(c, out)
  }
  out.byte(QUOTE)
}

function writeControl(c: number, out: ByteWriter): void {
  out.byte(BACKSLASH)
  const short = SHORT_ESCAPES[c]
  if (short !== undefined) {
    out.byte(short)
    return
  }
  out.utf8(`u00${HEX[c >> 4]}${HEX[c & 15]}`)
}

/**
 * The text of a field refused as not of its type. A body whose quoted field never closes is
 * refused as malformed instead, whatever record comes first: all records used to be read first.
 */
function refuse(part: Part, field: Field, text: string): never {
  try {
    parseCsv(decoder.decode(part.body))
  } catch (error) {
    throw malformed(part, error)
  }
  throw new BadRecordError(
    part.namespace,
    `${JSON.stringify(text)} is not a valid ${field.type} for field ${field.name}`,
  )
}

const DASH = 45
const DOT = 46
const ZERO = 48
const NINE = 57
const PLUS = 43

/** Whether `body[start..end)` matches `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`, JSON's numbers. */
function isNumber(body: Uint8Array, start: number, end: number): boolean {
  let i = start
  if (body[i] === DASH) i++
  if (i >= end) return false
  if (body[i] === ZERO) i++
  else if (isDigit(body[i])) i = digitsEnd(body, i, end)
  else return false
  if (i < end && body[i] === DOT) {
    if (i + 1 >= end || !isDigit(body[i + 1])) return false
    i = digitsEnd(body, i + 1, end)
  }
  if (i < end && (body[i] === 101 || body[i] === 69)) {
    i++
    if (body[i] === PLUS || body[i] === DASH) i++
    if (i >= end || !isDigit(body[i])) return false
    i = digitsEnd(body, i, end)
  }
  return i === end
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE
}

function digitsEnd(body: Uint8Array, from: number, end: number): number {
  let i = from
  while (i < end && isDigit(body[i])) i++
  return i
}

const TRUE = encoder.encode('true')
const FALSE = encoder.encode('false')

function isBoolean(body: Uint8Array, start: number, end: number): boolean {
  return equals(body, start, end, TRUE) || equals(body, start, end, FALSE)
}

function equals(body: Uint8Array, start: number, end: number, word: Uint8Array): boolean {
  if (end - start !== word.length) return false
  for (let i = 0; i < word.length; i++) if (body[start + i] !== word[i]) return false
  return true
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}
