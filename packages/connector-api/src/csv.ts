/**
 * RFC 4180 records as the contract writes them: an unquoted empty field is NULL, `""` is the
 * empty string. Only needed when a CSV part must change shape (CSV to JSON lines, or a header
 * that differs from the part's fields); matching CSV parts are copied as bytes.
 */

/** The records of a CSV text; `null` marks an unquoted empty field. */
export function parseCsv(text: string): (string | null)[][] {
  const records: (string | null)[][] = []
  let record: (string | null)[] = []
  let i = 0
  while (i < text.length) {
    let value: string | null
    if (text[i] === '"') {
      ;({ value, next: i } = quotedField(text, i + 1))
    } else {
      const end = fieldEnd(text, i)
      value = end === i ? null : text.slice(i, end)
      i = end
    }
    record.push(value)
    const ch = text[i]
    if (ch === ',') {
      i++
      if (i === text.length) record.push(null)
      continue
    }
    records.push(record)
    record = []
    if (ch === '\r' && text[i + 1] === '\n') i += 2
    else if (ch !== undefined) i++
  }
  if (record.length > 0) records.push(record)
  return records
}

function fieldEnd(text: string, from: number): number {
  let i = from
  while (i < text.length && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') i++
  return i
}

function quotedField(text: string, start: number): { value: string; next: number } {
  let value = ''
  let i = start
  for (;;) {
    const close = text.indexOf('"', i)
    if (close === -1) throw new Error('unterminated quoted field')
    value += text.slice(i, close)
    if (text[close + 1] !== '"') return { value, next: close + 1 }
    value += '"'
    i = close + 2
  }
}

/** One field: NULL is empty; text is always quoted unless `bare` (numbers, booleans). */
export function csvField(value: string | null, bare: boolean): string {
  if (value === null) return ''
  if (bare) return value
  return `"${value.replaceAll('"', '""')}"`
}
