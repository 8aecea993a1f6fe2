/**
 * What every sink's text holds: UTF-8 without NUL. PostgreSQL refuses a NUL (also as JSON's
 * `\u0000`) and bytes that are not UTF-8, DuckDB refuses the latter and would keep the former; a
 * record with either is set aside by the scan (scan.ts, refused.ts), so the same file behaves the
 * same in every sink and no batch waits in the WAL for a destination that can never take it.
 *
 * A block is checked whole by native searches; only one that fails a check is searched for the
 * places of its faults, still natively: the NULs from one to the next, the lines that are not
 * UTF-8 by halving the block's slices that are not. No block is walked byte by byte in JavaScript,
 * so one with a few faults costs little more than a clean one. Invariant: the faults are in byte
 * order, at most one of each kind per line, each the first of its kind in its line.
 */
import { isUtf8 } from 'node:buffer'
import { BACKSLASH, LF } from './bytes.js'

/** A place that no sink's text holds, and what is there. */
export interface TextFault {
  /** The byte of a NUL or of a `\u0000` escape; for bytes that are not UTF-8, the start of their line. */
  readonly at: number
  readonly problem: string
}

const NOT_UTF8 = 'bytes that are not UTF-8'
const NUL_BYTE = 'a NUL character (a 0x00 byte), which PostgreSQL cannot hold'
const NUL_ESCAPE = 'a NUL character (\\u0000), which PostgreSQL cannot hold'
const NO_FAULTS: readonly TextFault[] = []

/**
 * The faults of `records` (whole lines, or a head of whole lines) in byte order; at one byte, bytes
 * that are not UTF-8 come first (the line's problem, as a record is refused for its first fault).
 * A record's first fault is the first of those at or after its start.
 */
export function textFaults(records: Uint8Array, format: 'csv' | 'jsonl'): readonly TextFault[] {
  const nul = records.indexOf(0)
  const escaped = format === 'jsonl' ? escapedNul(records, 0) : -1
  const utf8 = isUtf8(records)
  if (nul === -1 && escaped === -1 && utf8) return NO_FAULTS
  const faults: TextFault[] = []
  if (!utf8) invalidLines(records, faults)
  for (let at = nul; at !== -1; at = records.indexOf(0, nextLine(records, at))) {
    faults.push({ at, problem: NUL_BYTE })
  }
  for (let at = escaped; at !== -1; at = escapedNul(records, nextLine(records, at))) {
    faults.push({ at, problem: NUL_ESCAPE })
  }
  // Sorting is stable: at one byte, the line that is not UTF-8 (pushed first) stays first.
  return faults.sort((a, b) => a.at - b.at)
}

/** The start of the line after the one holding byte `at`; `records.length` when it is the last. */
function nextLine(records: Uint8Array, at: number): number {
  const newline = records.indexOf(LF, at)
  return newline === -1 ? records.length : newline + 1
}

const ESCAPED_NUL = Buffer.from('\\u0000')

/** Where the first `\u0000` escape at or after `from` is (not a `\\` followed by `u0000`), or -1. */
function escapedNul(records: Uint8Array, from: number): number {
  const bytes = Buffer.from(records.buffer, records.byteOffset, records.length)
  for (let at = bytes.indexOf(ESCAPED_NUL, from); at !== -1; at = bytes.indexOf(ESCAPED_NUL, at + 1)) {
    let backslashes = 1
    while (at - backslashes >= 0 && bytes[at - backslashes] === BACKSLASH) backslashes++
    if (backslashes % 2 === 1) return at
  }
  return -1
}

/**
 * Slices of about this many bytes are checked in turn: a slice that is not UTF-8 is halved until
 * its lines are found, so a fault costs a few checks of its slice, not of the block.
 */
const SLICE_BYTES = 16 * 1024

/** Adds the start of each line of `records` that is not UTF-8 (a newline never falls inside a character). */
function invalidLines(records: Uint8Array, faults: TextFault[]): void {
  for (let from = 0; from < records.length; ) {
    const to = from + SLICE_BYTES >= records.length ? records.length : nextLine(records, from + SLICE_BYTES)
    if (!isUtf8(records.subarray(from, to))) halve(records, from, to, faults)
    from = to
  }
}

/** Adds the lines of `records[from, to)`, whole lines that are not UTF-8, that are not UTF-8. */
function halve(records: Uint8Array, from: number, to: number, faults: TextFault[]): void {
  const middle = lineStartNear(records, from, to)
  if (middle === -1) {
    faults.push({ at: from, problem: NOT_UTF8 })
    return
  }
  if (!isUtf8(records.subarray(from, middle))) halve(records, from, middle, faults)
  if (!isUtf8(records.subarray(middle, to))) halve(records, middle, to, faults)
}

/** A line start inside `(from, to)`, near the middle; -1 when `[from, to)` is one line. */
function lineStartNear(records: Uint8Array, from: number, to: number): number {
  const middle = from + ((to - from) >>> 1)
  const after = records.indexOf(LF, middle)
  if (after !== -1 && after + 1 < to) return after + 1
  const before = middle > from ? records.lastIndexOf(LF, middle - 1) : -1
  return before >= from && before + 1 < to ? before + 1 : -1
}
