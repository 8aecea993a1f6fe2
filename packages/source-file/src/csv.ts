/**
 * Parsing CSV into values, for the few places that need them: header rows, the sample rows that
 * types are inferred from, and records re-encoded because they hold a quote inside an unquoted
 * field. Records themselves move as bytes (scan.ts), and both follow the same rules: a quote opens a
 * quoted section only at the start of a field; anywhere else it is a character of the value.
 */
import { COMMA, CR, LF, QUOTE } from './bytes.js'

/** A parsed field: text, or null for an unquoted empty field (NULL in the record formats). */
export type CsvField = string | null

export interface CsvRecord {
  readonly fields: CsvField[]
  /** Characters of `text` up to and including the record's newline. */
  readonly end: number
}

/**
 * The complete records at the start of `text`, at most `limit` of them; blank lines are skipped.
 * A record without its newline yet is incomplete and not returned.
 */
export function parseCsv(text: string, limit: number): CsvRecord[] {
  const records: CsvRecord[] = []
  let fields: CsvField[] = []
  let field = ''
  let quoted = false
  let i = 0
  while (i < text.length && records.length < limit) {
    const c = text[i]
    if (c === '"' && atFieldStart(text, i)) {
      const close = closingQuote(text, i)
      if (close === -1) break
      field += text.slice(i + 1, close).replaceAll('""', '"')
      quoted = true
      i = close + 1
    } else if (c === ',' || c === '\n') {
      if (c === '\n' && field.endsWith('\r')) field = field.slice(0, -1)
      fields.push(quoted || field !== '' ? field : null)
      field = ''
      quoted = false
      i++
      if (c === '\n') {
        if (fields.length > 1 || fields[0] !== null) records.push({ fields, end: i })
        fields = []
      }
    } else {
      const end = plainEnd(text, i + 1)
      field += text.slice(i, end)
      i = end
    }
  }
  return records
}

/**
 * A record of the file (its bytes through the newline) in the contract's CSV: every text field
 * quoted, its quotes doubled, NULL left empty, LF at the end. For records whose bytes the sinks
 * would misread (scan.ts). It works on bytes, so no byte of a value changes (a decoder would drop a
 * leading U+FEFF, or replace invalid UTF-8).
 */
export function reencodeRecord(record: Uint8Array): Uint8Array {
  let end = record.length
  if (record[end - 1] === LF) end--
  if (record[end - 1] === CR) end--
  const parts: Uint8Array[] = []
  let i = 0
  for (;;) {
    if (record[i] === QUOTE) {
      // Quoted already: as it is (the scan refused text after a closing quote).
      const close = closingQuoteByte(record, i)
      parts.push(record.subarray(i, close + 1))
      i = close + 1
    } else {
      let stop = record.indexOf(COMMA, i)
      if (stop === -1 || stop > end) stop = end
      if (stop > i) parts.push(QUOTE_BYTE, ...doubledQuotes(record.subarray(i, stop)), QUOTE_BYTE)
      i = stop
    }
    if (i >= end) break
    parts.push(COMMA_BYTE)
    i++
  }
  parts.push(LF_BYTE)
  return Buffer.concat(parts)
}

const QUOTE_BYTE = Uint8Array.of(QUOTE)
const COMMA_BYTE = Uint8Array.of(COMMA)
const LF_BYTE = Uint8Array.of(LF)

/** `text`'s bytes with each quote doubled, as pieces. */
function doubledQuotes(text: Uint8Array): Uint8Array[] {
  const pieces: Uint8Array[] = []
  let from = 0
  for (let quote = text.indexOf(QUOTE); quote !== -1; quote = text.indexOf(QUOTE, from)) {
    pieces.push(text.subarray(from, quote + 1), QUOTE_BYTE)
    from = quote + 1
  }
  pieces.push(text.subarray(from))
  return pieces
}

/** The quote closing the quoted field opened at `open`, past `""` escapes. */
function closingQuoteByte(bytes: Uint8Array, open: number): number {
  let at = open + 1
  for (;;) {
    const quote = bytes.indexOf(QUOTE, at)
    if (quote === -1 || bytes[quote + 1] !== QUOTE) return quote === -1 ? bytes.length - 1 : quote
    at = quote + 2
  }
}

/** Whether the character at `i` begins a field: the record's first, or one after a comma. */
function atFieldStart(text: string, i: number): boolean {
  return i === 0 || text[i - 1] === ',' || text[i - 1] === '\n'
}

/** Where the unquoted text from `from` ends: at the next comma or newline, or the end. */
function plainEnd(text: string, from: number): number {
  let i = from
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === COMMA || c === LF) break
    i++
  }
  return i
}

/** The quote that closes the quoted section opened at `open`, skipping `""` escapes. */
function closingQuote(text: string, open: number): number {
  let at = open + 1
  for (;;) {
    const quote = text.indexOf('"', at)
    if (quote === -1 || text[quote + 1] !== '"') return quote
    at = quote + 2
  }
}
