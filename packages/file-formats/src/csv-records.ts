/**
 * CSV records as the contract writes them (connector-api's batch.ts): an unquoted empty field is
 * NULL, a record ends in LF (a CR before it is dropped). A quote inside an unquoted field, text
 * after a closing quote, a quote that never closes, or a record with another number of fields than
 * the schema (one NULL field for a schema of none) is malformed: the reading would be a guess. A
 * value its column cannot hold refuses its row alone, and the scan goes on.
 */
import { COMMA, CR, LF, QUOTE } from './char-codes.js'
import type { PartReader, RowSink } from './part-reader.js'
import { malformed, quoted, Refused, refusal } from './refusal.js'

/** Puts the rows of a part's CSV `text` into `out`; returns how many there were. */
export function decodeCsv(text: string, reader: PartReader, out: RowSink): number {
  return new CsvScan(text, reader, out).records()
}

/**
 * One pass over a part's CSV text. The cursor and the position (row, field) are fields, so each
 * step is a short method and a refused value is still reported where it was found.
 */
class CsvScan {
  private readonly text: string
  private readonly reader: PartReader
  private readonly out: RowSink
  /** The part's fields; a record holds as many, or one (NULL) where there are none. */
  private readonly fields: number
  private readonly expected: number
  /** The offset of the next character to read. */
  private i = 0
  /** The record being read, from 1; its field being read, from 0. */
  private row = 0
  private field = 0

  constructor(text: string, reader: PartReader, out: RowSink) {
    this.text = text
    this.reader = reader
    this.out = out
    this.fields = reader.columns.length
    this.expected = Math.max(1, this.fields)
  }

  /** Every record of the text, into `out`; returns the rows. */
  records(): number {
    while (this.i < this.text.length) this.record()
    return this.row
  }

  /** The record at the cursor; leaves the cursor after its LF. */
  private record(): void {
    this.row++
    this.field = 0
    do {
      const value = this.text.charCodeAt(this.i) === QUOTE ? this.quotedField() : this.unquotedField()
      if (this.field < this.fields && value !== null) this.setCell(value)
      this.field++
    } while (this.text.charCodeAt(this.i++) === COMMA)
    if (this.field !== this.expected)
      throw malformed(this.reader, this.row, `has ${this.field} fields where its schema has ${this.fields}`)
    this.out.endRow()
  }

  /** Sets the cell of the field being read from its text, or refuses the row for a value it cannot hold. */
  private setCell(text: string): void {
    const { reader } = this
    try {
      this.out.row[reader.columns[this.field]!] = reader.csv[this.field]!(text)
    } catch (error) {
      if (!(error instanceof Refused)) throw error
      this.out.refuseRow(refusal(reader, this.row, this.field, quoted(text), error.message))
    }
  }

  /** The text of the quoted field at the cursor, each doubled quote one; leaves the cursor after it. */
  private quotedField(): string {
    const { text } = this
    let start = this.i + 1
    let close = text.indexOf('"', start)
    let unquoted = ''
    for (;;) {
      if (close === -1) throw malformed(this.reader, this.row, 'has a quoted field that never closes')
      if (text.charCodeAt(close + 1) !== QUOTE) break
      unquoted += text.slice(start, close + 1)
      start = close + 2
      close = text.indexOf('"', start)
    }
    let i = close + 1
    const after = text.charCodeAt(i)
    if (after === CR && text.charCodeAt(i + 1) === LF) i++
    else if (after !== COMMA && after !== LF && i < text.length)
      throw malformed(this.reader, this.row, 'has text after the closing quote of a field')
    this.i = i
    return unquoted + text.slice(start, close)
  }

  /** The unquoted field at the cursor, NULL if empty; leaves the cursor on the comma or LF after it. */
  private unquotedField(): string | null {
    const { text } = this
    const start = this.i
    let i = start
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === COMMA || c === LF) break
      if (c === QUOTE) throw malformed(this.reader, this.row, 'has a quote inside an unquoted field')
    }
    this.i = i
    // A CR is part of the field unless it ends the record as a CRLF.
    const end = i > start && text.charCodeAt(i - 1) === CR && text.charCodeAt(i) === LF ? i - 1 : i
    return end === start ? null : text.slice(start, end)
  }
}
