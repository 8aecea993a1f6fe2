/**
 * JSON-lines parts as CSV records in the columns of a header: each line is parsed with
 * `JSON.parse` and its values written straight into a `TextWriter`, without a map of the record
 * or a string per row.
 */
import type { BatchPart } from './batch.js'
import { csvField } from './csv.js'
import { BadRecordError } from './errors.js'
import type { Field, NamespaceSchema } from './schema.js'
import { TextWriter } from './text-writer.js'

type Part = BatchPart & { readonly schema: NamespaceSchema }

/** Where one header column's values come from. */
interface Column {
  readonly name: string
  /** False when the part has no field of the column's name: the column is NULL, whatever the line holds. */
  readonly inPart: boolean
  /** The type of the part's last field of that name, else the header's. */
  readonly type: Field['type']
}

const decoder = new TextDecoder()
const COMMA = 44
const NEWLINE = 10
const OPEN_BRACE = 123

/** The part's JSON lines as CSV records with the columns of `header`. */
export function jsonLinesToCsv(part: Part, header: readonly Field[]): Uint8Array {
  const columns = columnsOf(part.schema.fields, header)
  const lines = new JsonLines(part)
  const out = new TextWriter(new Uint8Array(Math.max(part.body.length, 64)))
  for (let row = lines.next(); row !== END; row = lines.next()) {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) out.byte(COMMA)
      const column = columns[i] as Column
      if (column.inPart) writeValue(row[column.name], column.type, out, lines)
    }
    out.byte(NEWLINE)
  }
  return out.copy()
}

function columnsOf(fields: readonly Field[], header: readonly Field[]): Column[] {
  return header.map((column) => {
    const field = fields.findLast((f) => f.name === column.name)
    return { name: column.name, inPart: field !== undefined, type: field?.type ?? column.type }
  })
}

/** Marks the end of the lines. */
const END = Symbol('end')
type Row = Record<string, unknown>

/**
 * The records of a JSON-lines body in order: every line but those `trim` leaves empty, each one
 * whatever `JSON.parse` makes of it. Line numbers in errors count only those lines.
 */
class JsonLines {
  private readonly text: string
  private at = 0
  private line = 0

  constructor(private readonly part: Part) {
    this.text = decoder.decode(part.body)
  }

  next(): Row | typeof END {
    const text = this.text
    while (this.at <= text.length) {
      const newline = text.indexOf('\n', this.at)
      const end = newline === -1 ? text.length : newline
      const line = text.slice(this.at, end)
      this.at = end + 1
      if (line.charCodeAt(0) !== OPEN_BRACE && line.trim() === '') continue
      this.line++
      return this.parse(line)
    }
    return END
  }

  /**
   * Reads every line left, so that one that is not JSON is refused before an error a value of an
   * earlier record raised: all lines used to be parsed before any was written.
   */
  rest(): void {
    while (this.next() !== END);
  }

  private parse(line: string): Row {
    let row: Row
    try {
      row = JSON.parse(line) as Row
    } catch (error) {
      throw new BadRecordError(this.part.namespace, `line ${this.line} is not a JSON object`, error)
    }
    // A `null` line fails at its first field, with the TypeError reading `null[name]` raises.
    const first = this.part.schema.fields[0]
    if (row === null && first) void (row as Row)[first.name]
    return row
  }
}

/** A JSON value as a CSV field of `type`: numbers and booleans bare, strings and JSON quoted. */
function writeValue(value: unknown, type: Field['type'], out: TextWriter, lines: JsonLines): void {
  if (value === null || value === undefined) return
  if (type !== 'json' && typeof value === 'string') out.quoted(value)
  else if (type !== 'json' && typeof value === 'number') out.number(value)
  else if (type !== 'json' && typeof value === 'boolean') out.utf8(value ? 'true' : 'false')
  else out.utf8(otherField(value, type, lines))
}

/** JSON values, and whatever a line's prototype chain holds (a function), as `csvCell` wrote them. */
function otherField(value: unknown, type: Field['type'], lines: JsonLines): string {
  try {
    return type === 'json' || typeof value === 'object'
      ? csvField(JSON.stringify(value), false)
      : csvField(String(value), true)
  } catch (error) {
    // A function as JSON (`undefined`) fails, as it did once every line had been parsed.
    lines.rest()
    throw error
  }
}
