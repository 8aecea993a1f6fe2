/**
 * A small RFC 4180 reader for checking what sinks wrote. It keeps the contract's NULL rule: an
 * unquoted empty field is `null`, a quoted one (`""`) is the empty string.
 */

/** Splits CSV text into records of fields; `null` marks an unquoted empty field. */
export function parseCsv(text: string): (string | null)[][] {
  const records: (string | null)[][] = []
  let record: (string | null)[] = []
  let field = ''
  let quoted = false
  let i = 0
  const endField = () => {
    record.push(quoted || field !== '' ? field : null)
    field = ''
    quoted = false
  }
  while (i < text.length) {
    const ch = text[i] as string
    if (ch === '"' && field === '' && !quoted) {
      quoted = true
      const close = readQuoted(text, i + 1)
      field = close.value
      i = close.next
      continue
    }
    if (ch === ',') {
      endField()
      i++
    } else if (ch === '\n' || ch === '\r') {
      endField()
      records.push(record)
      record = []
      i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1
    } else {
      field += ch
      i++
    }
  }
  if (field !== '' || quoted || record.length > 0) {
    endField()
    records.push(record)
  }
  return records
}

function readQuoted(text: string, start: number): { value: string; next: number } {
  let value = ''
  let i = start
  while (i < text.length) {
    const end = text.indexOf('"', i)
    if (end === -1) throw new Error('CSV: unterminated quoted field')
    value += text.slice(i, end)
    if (text[end + 1] === '"') {
      value += '"'
      i = end + 2
    } else {
      return { value, next: end + 1 }
    }
  }
  throw new Error('CSV: unterminated quoted field')
}

/** CSV with a header row, as objects keyed by the header's names. */
export function parseCsvWithHeader(text: string): Record<string, string | null>[] {
  const [header, ...records] = parseCsv(text)
  if (!header) return []
  return records.map((record) => Object.fromEntries(header.map((name, i) => [name ?? '', record[i] ?? null])))
}
