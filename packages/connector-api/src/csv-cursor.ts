/**
 * The records of a CSV body read straight from its bytes, one at a time, as `parseCsv` (csv.ts)
 * reads them from the decoded text: each field is a byte range and a kind, not a string. UTF-8
 * decoding never turns an ASCII byte into part of another character, so the commas, quotes and
 * newlines found in the bytes are the ones `parseCsv` finds in the text, and the text of a field
 * is its bytes decoded on their own (`fieldText`).
 */

/** An unquoted empty field. */
export const NULL_FIELD = 0
/** An unquoted field: its bytes are its value. */
export const BARE_FIELD = 1
/** A quoted field: its bytes are between the quotes, each quote inside still doubled. */
export const QUOTED_FIELD = 2

/** A field's bytes are printable ASCII other than `"` and `\`: the same inside a JSON string. */
export const PLAIN = 0
/** Some byte is a control character, `"` or `\`, all are ASCII. */
export const NEEDS_ESCAPE = 1
/** Some byte is not ASCII (and so the field may hold invalid UTF-8). */
export const NOT_ASCII = 2
/**
 * With NOT_ASCII: the field's text starts with the second half of its first character, whose first
 * half ended the record before it (see `skipCharacter`).
 */
const STARTS_HALFWAY = 8

const COMMA = 44
const LF = 10
const CR = 13
const QUOTE = 34
const BACKSLASH = 92
/** A bit of BYTE_CLASS, beside NEEDS_ESCAPE and NOT_ASCII: the byte ends an unquoted field. */
const ENDS_BARE = 4

/** Each byte's NEEDS_ESCAPE / NOT_ASCII / ENDS_BARE bits. */
const BYTE_CLASS = new Uint8Array(256)
for (let c = 0; c < 256; c++) {
  const escaped = c < 0x20 || c === QUOTE || c === BACKSLASH ? NEEDS_ESCAPE : 0
  const ends = c === COMMA || c === LF || c === CR ? ENDS_BARE : 0
  BYTE_CLASS[c] = escaped | (c >= 0x80 ? NOT_ASCII : 0) | ends
}

const UTF8_BOM = [0xef, 0xbb, 0xbf]
/** Keeps a U+FEFF that starts a field: only the body's first one is a byte order mark. */
const fieldDecoder = new TextDecoder('utf-8', { ignoreBOM: true })

/**
 * A cursor over the records of a body. `next` reads one record into `kinds`, `starts`, `ends` and
 * `classes` (for its first `columns` fields; the rest are read past) and `count`.
 */
export class CsvCursor {
  readonly kinds: Uint8Array
  readonly starts: Int32Array
  readonly ends: Int32Array
  /** Each field's PLAIN, or its NEEDS_ESCAPE and NOT_ASCII bits. */
  readonly classes: Uint8Array
  /** Fields of the current record that are in the arrays. */
  count = 0
  private at: number
  /** The next record starts with the second half of a 4-byte character. */
  private halfway = false

  constructor(
    private readonly body: Uint8Array,
    private readonly columns: number,
  ) {
    this.kinds = new Uint8Array(columns)
    this.starts = new Int32Array(columns)
    this.ends = new Int32Array(columns)
    this.classes = new Uint8Array(columns)
    // `TextDecoder` drops a byte order mark that starts the body, so `parseCsv` never sees it.
    this.at = UTF8_BOM.every((b, i) => body[i] === b) ? UTF8_BOM.length : 0
  }

  /**
   * Reads the next record; false after the last. Throws `parseCsv`'s error for a quoted field
   * that never closes.
   */
  next(): boolean {
    const b = this.body
    const n = b.length
    let i = this.at
    if (i >= n) return false
    let field = 0
    for (;;) {
      i = b[i] === QUOTE ? this.quoted(i + 1, field) : this.bare(i, field)
      if (this.halfway) {
        this.halfway = false
        if (field < this.columns) this.classes[field] = (this.classes[field] as number) | STARTS_HALFWAY
      }
      field++
      const c = b[i]
      if (c === COMMA) {
        i++
        if (i < n) continue
        // A comma that ends the body ends its last record with a NULL field.
        this.field(field++, NULL_FIELD, i, i, PLAIN)
      } else if (c === CR && b[i + 1] === LF) i += 2
      else if (i < n) i = this.skipCharacter(i)
      this.at = i
      this.count = Math.min(field, this.columns)
      return true
    }
  }

  /** The text of a field of the current record, as `parseCsv` gives it. */
  fieldText(column: number): string {
    let text = fieldDecoder.decode(this.body.subarray(this.starts[column], this.ends[column]))
    if ((this.classes[column] as number) & STARTS_HALFWAY) text = text.slice(1)
    return this.kinds[column] === QUOTED_FIELD && this.classes[column] !== PLAIN
      ? text.replaceAll('""', '"')
      : text
  }

  /** Reads an unquoted field from `start`; returns the index after it. */
  private bare(start: number, field: number): number {
    const b = this.body
    const n = b.length
    let classes = 0
    let i = start
    for (; i < n; i++) {
      const bits = BYTE_CLASS[b[i] as number] as number
      if (bits & ENDS_BARE) break
      classes |= bits
    }
    this.field(field, i === start ? NULL_FIELD : BARE_FIELD, start, i, classes)
    return i
  }

  /** Reads a quoted field whose text starts at `start`; returns the index after its closing quote. */
  private quoted(start: number, field: number): number {
    const b = this.body
    const n = b.length
    let classes = 0
    for (let i = start; i < n; i++) {
      const c = b[i] as number
      if (c === QUOTE) {
        if (b[i + 1] !== QUOTE) {
          this.field(field, QUOTED_FIELD, start, i, classes)
          return i + 1
        }
        classes |= NEEDS_ESCAPE
        i++
      } else classes |= (BYTE_CLASS[c] as number) & ~ENDS_BARE
    }
    throw new Error('unterminated quoted field')
  }

  /**
   * The index after the character at `i`, which ended a record after a closing quote: `parseCsv`
   * skips one UTF-16 unit there. That is one character, or one U+FFFD for a maximal invalid
   * sequence of UTF-8 bytes; of a 4-byte character only its first half (the record after starts
   * with the second).
   */
  private skipCharacter(i: number): number {
    const b = this.body
    const lead = b[i] as number
    if (lead < 0x80) return i + 1
    const length =
      lead >= 0xc2 && lead <= 0xdf
        ? 2
        : lead >= 0xe0 && lead <= 0xef
          ? 3
          : lead >= 0xf0 && lead <= 0xf4
            ? 4
            : 1
    // The second byte's range narrows after E0, ED, F0 and F4: no overlong, surrogate or too-large code point.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf
    let end = i + 1
    for (; end < i + length; end++) {
      const c = b[end]
      const first = end === i + 1
      if (c === undefined || c < (first ? low : 0x80) || c > (first ? high : 0xbf)) return end
    }
    if (length < 4) return end
    this.halfway = true
    return i
  }

  private field(field: number, kind: number, start: number, end: number, classes: number): void {
    if (field >= this.columns) return
    this.kinds[field] = kind
    this.starts[field] = start
    this.ends[field] = end
    this.classes[field] = classes
  }
}
