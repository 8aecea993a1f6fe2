/**
 * Finding record boundaries in raw bytes without parsing values: the File source cuts each block
 * after its last complete record and passes those bytes on untouched. Both scanners start at a
 * record boundary and stop before a record they cannot pass on.
 */
import { CLOSE_BRACE, COMMA, CR, LF, OPEN_BRACE, QUOTE, SPACE, TAB } from './bytes.js'

export interface Scan {
  /** Bytes from the block's start through the newline of its last complete record. */
  readonly end: number
  /** Records before `end`; blank lines are not records. */
  readonly rows: number
  /** `[start, end)` of each blank line before `end`, flattened: they are cut out of the body. */
  readonly blanks: readonly number[]
  /** Set when the record at `end` cannot be passed on; scanning stopped there. */
  readonly bad?: string
}

/**
 * CSV (RFC 4180). A quote opens a quoted section that the next quote closes (`""` closes and
 * reopens), so a newline between them is data. Each record must have `columns` fields. An open
 * quote at the end of the block means its record is incomplete: it is left for the next block.
 */
export function scanCsv(bytes: Uint8Array, columns: number): Scan {
  const blanks: number[] = []
  const n = bytes.length
  let start = 0
  let rows = 0
  let fields = 1
  let i = 0
  while (i < n) {
    // Letters, digits, `-`, `.` and `:` sort above the comma: this loop passes most bytes.
    let c = bytes[i] as number
    while (c >= COMMA) {
      if (c === COMMA) fields++
      if (++i === n) return { end: start, rows, blanks }
      c = bytes[i] as number
    }
    if (c === QUOTE) {
      const close = bytes.indexOf(QUOTE, i + 1)
      if (close === -1) break
      i = close + 1
      continue
    }
    if (c === LF) {
      if (i === start || (i === start + 1 && bytes[start] === CR)) {
        blanks.push(start, i + 1)
      } else if (fields !== columns) {
        return { end: start, rows, blanks, bad: `${fields} fields where the file has ${columns} columns` }
      } else {
        rows++
      }
      start = i + 1
      fields = 1
    }
    i++
  }
  return { end: start, rows, blanks }
}

/** JSON lines: every non-blank line must look like an object (`{` … `}`); values are not parsed. */
export function scanJsonl(bytes: Uint8Array): Scan {
  const blanks: number[] = []
  let start = 0
  let rows = 0
  for (let newline = bytes.indexOf(LF); newline !== -1; newline = bytes.indexOf(LF, start)) {
    let first = start
    let last = newline - 1
    while (first <= last && isSpace(bytes[first] as number)) first++
    while (last >= first && isSpace(bytes[last] as number)) last--
    if (first > last) {
      blanks.push(start, newline + 1)
    } else if (bytes[first] !== OPEN_BRACE || bytes[last] !== CLOSE_BRACE) {
      return { end: start, rows, blanks, bad: 'the line is not a JSON object' }
    } else {
      rows++
    }
    start = newline + 1
  }
  return { end: start, rows, blanks }
}

function isSpace(c: number): boolean {
  return c === SPACE || c === TAB || c === CR
}

/** The bytes before `end` without the blank lines: the body is copied only when there are some. */
export function withoutBlanks(bytes: Uint8Array, end: number, blanks: readonly number[]): Uint8Array {
  if (blanks.length === 0) return bytes.subarray(0, end)
  const parts: Uint8Array[] = []
  let from = 0
  for (let i = 0; i < blanks.length; i += 2) {
    parts.push(bytes.subarray(from, blanks[i]))
    from = blanks[i + 1] as number
  }
  parts.push(bytes.subarray(from, end))
  return Buffer.concat(parts)
}

/** Where the first CSV record of `bytes` ends (after its newline), or -1 when it is incomplete. */
export function firstRecordEnd(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === LF) return i + 1
    if (c === QUOTE) {
      const close = bytes.indexOf(QUOTE, i + 1)
      if (close === -1) return -1
      i = close
    }
  }
  return -1
}
