/**
 * CSV and JSON-lines files as writers in the wild make them. A field is kept as the text written
 * into the file, which is what the comparison reads in the landed column's type.
 */
import { civilFromDays, clock, isoDate, splitMicros } from './calendar.js'
import type { Column, JsonData, Row, Table, Timestamp, Value } from './table.js'

/** A field's text; `raw` fields are JSON literals in JSON lines (numbers, booleans, nested values). */
export type FileCell = { readonly text: string; readonly raw: boolean } | null

export interface FileStyle {
  readonly lineEnd: '\n' | '\r\n'
  /** Whether the last record ends with a line end. */
  readonly finalNewline: boolean
  /** CSV: a UTF-8 byte-order mark before the header. */
  readonly bom: boolean
  /**
   * CSV: `rfc` quotes a field holding `,` `"` CR or LF; `bare-quotes` leaves a `"` inside a field
   * unquoted (as hand-made files do: `37°36'37.8"N`); `all` quotes every non-NULL field.
   */
  readonly quoting: 'rfc' | 'bare-quotes' | 'all'
  /** 0: `…T…ffffffZ`, 1: `… …ffffff+00:00`, 2: fraction only when non-zero, 3: a +05:30 offset. */
  readonly timestampStyle: 0 | 1 | 2 | 3
  /** JSON lines: a NULL as `null` or as a missing key. */
  readonly nullAsMissingKey: boolean
}

export const PLAIN_STYLE: FileStyle = {
  lineEnd: '\n',
  finalNewline: true,
  bom: false,
  quoting: 'rfc',
  timestampStyle: 0,
  nullAsMissingKey: false,
}

/** Doubles always carry a point or an exponent, so inference reads them as doubles. */
export function doubleText(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (n === Number.POSITIVE_INFINITY) return 'Infinity'
  if (n === Number.NEGATIVE_INFINITY) return '-Infinity'
  if (Object.is(n, -0)) return '-0.0'
  const text = String(n)
  return /[.e]/.test(text) ? text : `${text}.0`
}

const OFFSET_MICROS = 19_800_000_000n

export function timestampText(value: Timestamp, style: FileStyle['timestampStyle']): string {
  if (typeof value === 'string') return value
  const { year } = civilFromDays(splitMicros(value).days)
  const shifted = style === 3 && year > 1 && year < 9999
  const { days, timeOfDay } = splitMicros(shifted ? value + OFFSET_MICROS : value)
  const { hms, fraction } = clock(timeOfDay)
  const date = isoDate(days)
  if (shifted) return `${date}T${hms}.${fraction}+05:30`
  if (style === 1) return `${date} ${hms}.${fraction}+00:00`
  if (style === 2) return `${date}T${hms}${/^0+$/.test(fraction) ? '' : `.${fraction.replace(/0+$/, '')}`}Z`
  return `${date}T${hms}.${fraction}Z`
}

export function fileCell(column: Column, value: Value | null, style: FileStyle): FileCell {
  if (value === null) return null
  switch (column.type) {
    case 'string':
      return { text: value as string, raw: false }
    case 'double':
      return { text: doubleText(value as number), raw: true }
    case 'date':
      return { text: isoDate(value as number), raw: false }
    case 'timestamp':
      return { text: timestampText(value as Timestamp, style.timestampStyle), raw: false }
    case 'json':
      return { text: JSON.stringify(value as JsonData), raw: true }
    default:
      return { text: String(value), raw: true }
  }
}

export function fileCells(table: Table, style: FileStyle): FileCell[][] {
  return table.rows.map((row: Row) =>
    row.map((value, c) => fileCell(table.columns[c] as Column, value, style)),
  )
}

function csvField(cell: FileCell, quoting: FileStyle['quoting']): string {
  if (cell === null) return ''
  const text = cell.text
  const needsQuotes =
    quoting === 'all' ||
    text === '' ||
    /[,\r\n]/.test(text) ||
    text.startsWith('"') ||
    (quoting === 'rfc' && text.includes('"'))
  return needsQuotes ? `"${text.replaceAll('"', '""')}"` : text
}

function joinLines(lines: string[], style: FileStyle): string {
  return lines.join(style.lineEnd) + (style.finalNewline ? style.lineEnd : '')
}

export function csvText(columns: readonly Column[], cells: readonly FileCell[][], style: FileStyle): string {
  const header = columns.map((c) => c.name).join(',')
  const records = cells.map((row) => row.map((cell) => csvField(cell, style.quoting)).join(','))
  return (style.bom ? '\uFEFF' : '') + joinLines([header, ...records], style)
}

export function jsonLinesText(
  columns: readonly Column[],
  cells: readonly FileCell[][],
  style: FileStyle,
): string {
  const lines = cells.map((row) => {
    const members: string[] = []
    row.forEach((cell, c) => {
      const key = JSON.stringify((columns[c] as Column).name)
      if (cell === null) {
        if (!style.nullAsMissingKey) members.push(`${key}:null`)
      } else members.push(`${key}:${cell.raw ? cell.text : JSON.stringify(cell.text)}`)
    })
    return `{${members.join(',')}}`
  })
  return joinLines(lines, style)
}
