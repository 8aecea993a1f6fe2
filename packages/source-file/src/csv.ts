/**
 * Parsing CSV into values, for the few places that need them: header rows and the sample rows
 * that types are inferred from. Records themselves move as bytes (scan.ts).
 */
import { COMMA, LF, QUOTE } from './bytes.js'

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
    if (c === '"') {
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

/** Where the unquoted text from `from` ends: at the next comma, newline or quote, or the end. */
function plainEnd(text: string, from: number): number {
  let i = from
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === COMMA || c === LF || c === QUOTE) break
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
