/**
 * A file larger than the inference sample whose sampled rows are all integers and plain dates,
 * followed by generated rows that are not: a double in the int column, a time of day in the date
 * column. Inference must widen the column or refuse loudly, never round or truncate.
 */
import type fc from 'fast-check'
import { daysFromCivil, isoDate } from './calendar.js'
import { type FileCell, fileCell, PLAIN_STYLE } from './file-formats.js'
import { tableArbitrary } from './generate.js'
import type { Column } from './table.js'

/** Rows before the late ones: about 350 KiB of CSV, past the 256 KiB sample, under its 20,000 records. */
export const SAMPLED_ROWS = 16_000

export const LATE_COLUMNS: readonly Column[] = [
  { name: 'id', type: 'int' },
  { name: 'n', type: 'double' },
  { name: 'day', type: 'timestamp' },
]

const FIRST_DAY = daysFromCivil({ year: 2020, month: 1, day: 1 })

function sampledRow(k: number): FileCell[] {
  return [
    { text: String(k), raw: true },
    { text: String(k % 1000), raw: true },
    { text: isoDate(FIRST_DAY + (k % 365)), raw: false },
  ]
}

/** The whole file's cells: the sampled rows, then generated late rows (with `1.5` and `2020-01-02T10:30:00Z` among them). */
export function lateValueCells(nonFinite: boolean): fc.Arbitrary<FileCell[][]> {
  const late = tableArbitrary({
    columns: LATE_COLUMNS.slice(1),
    domain: { years: 'file', infinity: false, nonFinite },
    withId: false,
    nullable: true,
  })
  return late.map((table) => {
    const sampled = Array.from({ length: SAMPLED_ROWS }, (_, k) => sampledRow(k))
    const lateRows = table.rows.map((row, r) => [
      { text: String(SAMPLED_ROWS + r), raw: true },
      ...row.map((value, c) =>
        fileCell(LATE_COLUMNS[c + 1] as Column, value, { ...PLAIN_STYLE, timestampStyle: 2 }),
      ),
    ])
    return [...sampled, ...lateRows]
  })
}
