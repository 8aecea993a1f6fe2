/**
 * CSV parts whose columns differ from the file's header, rewritten in the header's columns from
 * the CSV bytes: an ASCII field is copied as it is (its quotes, already doubled, with it), only a
 * field that is not ASCII becomes a string.
 */
import type { BatchPart } from './batch.js'
import { ByteWriter } from './byte-writer.js'
import { csvField } from './csv.js'
import { BARE_FIELD, CsvCursor, NOT_ASCII, NULL_FIELD, PLAIN, QUOTED_FIELD } from './csv-cursor.js'
import { BadRecordError } from './errors.js'
import type { Field, NamespaceSchema } from './schema.js'

type Part = BatchPart & { readonly schema: NamespaceSchema }

/** Where one header column's values come from. */
interface Column {
  /** The part's last field of the column's name, or -1 when the part has none (the column is NULL). */
  readonly source: number
  /** Numbers and booleans are written unquoted. */
  readonly bare: boolean
}

const BARE_TYPES = new Set(['int', 'long', 'double', 'boolean'])
const QUOTE = 34
const COMMA = 44
const NEWLINE = 10

/** The part's CSV records with the columns of `header`. */
export function csvInHeaderColumns(part: Part, header: readonly Field[]): Uint8Array {
  const columns = columnsOf(part.schema.fields, header)
  const records = new CsvCursor(part.body, part.schema.fields.length)
  const out = new ByteWriter(part.body.length)
  while (nextRecord(part, records)) {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) out.byte(COMMA)
      writeField(part.body, columns[i] as Column, records, out)
    }
    out.byte(NEWLINE)
  }
  return out.copy()
}

function columnsOf(fields: readonly Field[], header: readonly Field[]): Column[] {
  return header.map((column) => {
    const source = fields.findLastIndex((f) => f.name === column.name)
    return { source, bare: BARE_TYPES.has(fields[source]?.type ?? column.type) }
  })
}

function nextRecord(part: Part, records: CsvCursor): boolean {
  try {
    return records.next()
  } catch (error) {
    throw new BadRecordError(part.namespace, 'the CSV body is malformed', error)
  }
}

function writeField(body: Uint8Array, column: Column, records: CsvCursor, out: ByteWriter): void {
  const source = column.source
  if (source < 0 || source >= records.count) return
  const kind = records.kinds[source]
  if (kind === NULL_FIELD) return
  const start = records.starts[source] as number
  const end = records.ends[source] as number
  const classes = records.classes[source] as number
  if (column.bare && kind === BARE_FIELD && !(classes & NOT_ASCII)) out.range(body, start, end)
  else if (!column.bare && (kind === QUOTED_FIELD ? !(classes & NOT_ASCII) : classes === PLAIN)) {
    out.byte(QUOTE)
    out.range(body, start, end)
    out.byte(QUOTE)
  } else out.utf8(csvField(records.fieldText(source), column.bare))
}
