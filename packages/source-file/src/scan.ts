/**
 * Finding record boundaries in raw bytes without parsing values: the File source cuts each block
 * after its last complete record and passes those bytes on untouched. Both scanners start at a
 * record boundary; a record they cannot pass on is listed in `refused` and scanning goes on after it.
 * Text no sink holds is found before the scan (text.ts `textFaults`): the scan only tells, at each
 * record's end, whether the next fault is inside it.
 */
import {
  CLOSE_BRACE,
  COLON,
  COMMA,
  CR,
  DOT,
  isDigit,
  LF,
  LOWER_E,
  MINUS,
  OPEN_BRACE,
  QUOTE,
  SLASH,
  SPACE,
  TAB,
  UPPER_E,
} from './bytes.js'
import { pastMicros } from './fit.js'
import type { TextFault } from './text.js'

export interface Scan {
  /** Bytes from the block's start through the newline of its last complete record. */
  readonly end: number
  /** Records before `end`; blank lines are not records. */
  readonly rows: number
  /** `[start, end)` of each blank line before `end`, flattened: they are cut out of the body. */
  readonly blanks: readonly number[]
  /** CSV: the start of each record before `end` that holds a quote inside an unquoted field. */
  readonly strays?: readonly number[]
  /**
   * The CR of each CRLF record end before `end`, cut out so that every record passed on ends
   * in LF alone: a sink's CSV reader takes one line end for a whole body (DuckDB's `read_csv`
   * refuses a CR inside a quoted field once it has taken CRLF, and PostgreSQL's `COPY` one mixed
   * with LF), and a part may join the records of several files.
   */
  readonly crs?: readonly number[]
  /**
   * CSV: `[record start, column]` of each value before `end`, flattened, that may not fit its
   * column's type (see `CsvWatch`): a fraction in an integer column, a time in a date column.
   */
  readonly misfits?: readonly number[]
  /** Records before `end` that cannot be passed on, in order: not counted in `rows`, and none of their strays, CRs or misfits are listed. */
  readonly refused?: readonly ScanRefusal[]
}

/** A record the scan cannot pass on: `[start, end)` (through its newline), and why. */
export interface ScanRefusal {
  readonly start: number
  readonly end: number
  readonly problem: string
}

const TEXT_AFTER_QUOTE_PROBLEM = 'text follows the closing quote of a quoted field'
const NO_FAULTS: readonly TextFault[] = []

/**
 * CSV (RFC 4180, read as DuckDB and Python read it). A quote at the start of a field opens a quoted
 * section that the next lone quote closes (`""` is a quote inside it), so commas and newlines
 * between them are data; after the closing quote the field must end (comma, newline, CRLF). A quote
 * anywhere else in a field is a character of its value (`37°36'37.8"N`): the sinks' CSV readers
 * would take it for a quote, so such records are listed in `strays` and passed on re-encoded
 * (`reencodeRecord`), and so are records with a CR inside an unquoted field. CRLF record ends are
 * passed on as LF (`crs`). A record without `columns` fields, or with text after the closing quote
 * of a quoted field (read on as unquoted text to find its end), is listed in `refused`; so is one
 * that holds one of `faults` (text no sink holds, in byte order), for the first of them, unless it
 * was refused for its fields first. An open quote at the end of the block means its record is
 * incomplete: it is left for the next block.
 *
 * Values are not parsed, but `watch` names the columns whose type a sink could silently alter a
 * value of: their values with a `.` or an exponent (integer columns), a `:` (date columns) or more
 * than six fraction digits (timestamp columns) are listed in `misfits`, for the caller to judge
 * whole; so are, in the numeric columns of a configured schema, values with a character no number
 * has (`abc`, `""`).
 *
 * Only commas, quotes and newlines matter (and dots or colons where watched), and most 4-byte words
 * hold none of them: those are tested and their commas counted a word at a time (SWAR), the rest
 * byte by byte. That halves the scan's time on bikehire CSV (1M rows: 68–76 against 149–150 ms),
 * the largest cost on the event loop of a CSV sync.
 */
export function scanCsv(
  bytes: Uint8Array,
  columns: number,
  watch: CsvWatch = NO_WATCH,
  faults: readonly TextFault[] = NO_FAULTS,
): Scan {
  const blanks: number[] = []
  const strays: number[] = []
  const misfits: number[] = []
  const crs: number[] = []
  const refused: ScanRefusal[] = []
  const { flags, spans } = watch
  const watching = watch.any !== 0
  const dots = (watch.any & (FRACTION | NANOS)) !== 0
  const colons = (watch.any & TIME) !== 0
  const exponents = (watch.any & FRACTION) !== 0
  const numbers = (watch.any & NUMBER) !== 0
  const n = bytes.length
  const { words, wordsFrom } = alignedWords(bytes)
  const wordsTo = wordsFrom + words.byteLength
  let start = 0
  let rows = 0
  let fields = 1
  /** The record at `start` has text after a closing quote: it is refused at its end. */
  let broken = false
  /** The next of `faults` not behind `start`, and its byte (`n` when there is none). */
  let fault = 0
  let faultAt = faultByte(faults, fault, n)
  let i = 0
  // Closures made per call would deoptimize the loop ("wrong call target"): the helpers are top level.
  const lists: Lists = { blanks, strays, crs, misfits, refused }
  while (i < n) {
    if (i >= wordsFrom && i < wordsTo && ((i - wordsFrom) & 3) === 0) {
      let w = (i - wordsFrom) >>> 2
      for (; w < words.length; w++) {
        const word = words[w] as number
        // LF, CR and the quote are the only bytes below `#` the scan stops at: one test finds all
        // three (and stops at a tab or space too, which the byte path passes over).
        if (hasByteBelow(word, HASH) !== 0) break
        const commas = bytesEqual(word, COMMA_WORD)
        if (watching && spans[fields - 1] !== 0) {
          let marks = 0
          if (dots) marks |= bytesEqual(word, DOT_WORD)
          if (colons) marks |= bytesEqual(word, COLON_WORD)
          // `e` and `E` differ in the bit 0x20: one test of the word with that bit set finds both.
          if (exponents) marks |= bytesEqual(word | CASE_BITS, LOWER_E_WORD)
          // Marks only in columns nobody watches (a double's point, an e in a word): the word stays
          // here. Otherwise the byte path judges it.
          if (marks !== 0 && marksIn(marks, commas, fields, flags, MARKED)) break
          // Without a comma the word is in one column: looked at only when it is a number's.
          if (numbers && (commas !== 0 || ((flags[fields - 1] as number) & NUMBER) !== 0)) {
            const odd = notNumeric(word)
            if (odd !== 0 && (commas === 0 || marksIn(odd, commas, fields, flags, NUMBER))) break
          }
        }
        fields += countBytes(commas)
      }
      // The word with a quote or newline, and any bytes after the last word, go byte by byte.
      i = wordsFrom + w * 4
      if (i === n) break
    }
    const c = bytes[i] as number
    if (c === COMMA) {
      fields++
    } else if (c === QUOTE) {
      if (i === start || bytes[i - 1] === COMMA) {
        const after = quotedFieldEnd(bytes, i)
        if (after === INCOMPLETE) break
        if (after === TEXT_AFTER_QUOTE) {
          broken = true
          i = closingQuote(bytes, i) + 1
          continue
        }
        const watched = flags[fields - 1] ?? 0
        // A quoted empty value is the empty string, which no number column holds.
        if (
          watched !== 0 &&
          (holdsWatched(bytes, i + 1, after - 1, watched) || (watched & NUMBER && after === i + 2))
        )
          addMisfit(misfits, start, fields - 1)
        i = after
        continue
      }
      if (strays[strays.length - 1] !== start) strays.push(start)
    } else if (c === CR) {
      // A CR not ending a record is a character of an unquoted value: re-encoded, it is quoted.
      if (i + 1 < n && bytes[i + 1] !== LF && strays[strays.length - 1] !== start) strays.push(start)
    } else if (watching && (c === DOT || c === COLON || c === LOWER_E || c === UPPER_E)) {
      // Past the last column (a record with too many fields) there is nothing to watch.
      if (fields <= flags.length && mayMisfit(bytes, i, flags[fields - 1] as number))
        addMisfit(misfits, start, fields - 1)
    } else if (numbers && c !== LF && ((flags[fields - 1] as number) & NUMBER) !== 0 && !isNumeric(c)) {
      addMisfit(misfits, start, fields - 1)
    } else if (c === LF) {
      if (i === start || (i === start + 1 && bytes[start] === CR)) {
        blanks.push(start, i + 1)
      } else if (fields !== columns || broken) {
        const problem = broken
          ? TEXT_AFTER_QUOTE_PROBLEM
          : `${fields} fields where the file has ${columns} columns`
        refuseRecord(lists, start, i + 1, problem)
        broken = false
      } else if (faultAt <= i) {
        refuseRecord(lists, start, i + 1, (faults[fault] as TextFault).problem)
      } else {
        rows++
        // A re-encoded record gets a LF of its own.
        if (bytes[i - 1] === CR && strays[strays.length - 1] !== start) crs.push(i - 1)
      }
      if (faultAt <= i) {
        // The record's other faults go with it, whatever refused it.
        fault = faultAfter(faults, fault, i)
        faultAt = faultByte(faults, fault, n)
      }
      start = i + 1
      fields = 1
    }
    i++
  }
  return scanResult(lists, start, rows)
}

/** The byte of `faults[fault]`; `none` past the last. */
function faultByte(faults: readonly TextFault[], fault: number, none: number): number {
  return fault < faults.length ? (faults[fault] as TextFault).at : none
}

/** The first of `faults` from `fault` on that is after byte `at`. */
function faultAfter(faults: readonly TextFault[], fault: number, at: number): number {
  let next = fault
  while (next < faults.length && (faults[next] as TextFault).at <= at) next++
  return next
}

interface Lists {
  readonly blanks: number[]
  readonly strays: number[]
  readonly crs: number[]
  readonly misfits: number[]
  readonly refused: ScanRefusal[]
}

/** The scan up to `start`: the record there is incomplete, so its strays and misfits do not count. */
function scanResult(lists: Lists, start: number, rows: number): Scan {
  const { blanks, strays, crs, misfits, refused } = lists
  forget(lists, start)
  return {
    end: start,
    rows,
    blanks,
    ...(strays.length > 0 ? { strays } : {}),
    ...(crs.length > 0 ? { crs } : {}),
    ...(misfits.length > 0 ? { misfits } : {}),
    ...(refused.length > 0 ? { refused } : {}),
  }
}

/** Lists the record `[start, end)` as refused: it is cut out whole, so its strays and misfits go. */
function refuseRecord(lists: Lists, start: number, end: number, problem: string): void {
  forget(lists, start)
  lists.refused.push({ start, end, problem })
}

/** Drops the stray and the misfits listed for the record at `start` (its CR is listed only once it passes). */
function forget({ strays, misfits }: Lists, start: number): void {
  if (strays[strays.length - 1] === start) strays.pop()
  while (misfits[misfits.length - 2] === start) misfits.length -= 2
}

/** Lists the value of `column` in the record at `start` as a misfit, once. */
function addMisfit(misfits: number[], start: number, column: number): void {
  if (misfits[misfits.length - 2] !== start || misfits[misfits.length - 1] !== column)
    misfits.push(start, column)
}

/** Watched for a fraction: a `.`, `e` or `E` in an integer column's value. */
export const FRACTION = 1
/** Watched for a time: a `:` in a date column's value. */
export const TIME = 2
/** Watched for sub-microseconds: more than 6 digits after a `.` in a timestamp column's value. */
export const NANOS = 4
/** Watched for text: a character no number has (`isNumeric`) in a configured numeric column's value. */
export const NUMBER = 8
/** The flags watching for the marks a word is tested for (`.`, `:`, `e`); NUMBER has a test of its own. */
const MARKED = FRACTION | TIME | NANOS

/** Per column, what to watch its values for (FRACTION, TIME, NANOS, NUMBER); `any` is their union. */
export interface CsvWatch {
  readonly flags: Uint8Array
  readonly any: number
  /**
   * Per column, the flags of it and the four after it: the columns a 4-byte word that starts in it
   * can reach. A word whose span is unwatched is not looked at for marks.
   */
  readonly spans: Uint8Array
}

/** What to watch each column's values for: `flags` per column (FRACTION, TIME, NANOS, NUMBER). */
export function csvWatch(flags: Uint8Array): CsvWatch {
  const spans = flags.map((_, column) =>
    flags.subarray(column, column + 5).reduce((all, flag) => all | flag, 0),
  )
  return { flags, any: flags.reduce((all, flag) => all | flag, 0), spans }
}

export const NO_WATCH: CsvWatch = csvWatch(new Uint8Array(0))

/** Whether bytes[from, to) hold a byte that `watched` looks for. */
function holdsWatched(bytes: Uint8Array, from: number, to: number, watched: number): boolean {
  for (let i = from; i < to; i++) if (mayMisfit(bytes, i, watched)) return true
  return false
}

/**
 * Whether the byte at `i`, in a value of a column watched for `watched`, shows the value may not
 * fit: a point or an exponent in an integer, a colon in a date, more than microseconds in a timestamp.
 */
function mayMisfit(bytes: Uint8Array, i: number, watched: number): boolean {
  const c = bytes[i]
  if (watched & FRACTION && (c === DOT || c === LOWER_E || c === UPPER_E)) return true
  if (watched & TIME && c === COLON) return true
  if (watched & NUMBER && !isNumeric(c as number)) return true
  return (watched & NANOS) !== 0 && c === DOT && pastMicros(bytes, i)
}

/**
 * A character of a plain number: a digit, `-` or `.`. Any other (`e`, `+`, a space) is judged whole
 * by the caller; a number of these alone may still not be one (`1-2`): the sink refuses it.
 */
function isNumeric(c: number): boolean {
  return isDigit(c) || c === MINUS || c === DOT
}

/**
 * Whether one of the bytes flagged in `marks` is in a column watched for one of `flag`: counted
 * from `fields`, past the commas before it.
 */
function marksIn(marks: number, commas: number, fields: number, flags: Uint8Array, flag: number): boolean {
  for (let left = marks; left !== 0; left &= left - 1) {
    const mark = left & -left
    if (((flags[fields - 1 + countBytes(commas & (mark - 1))] as number) & flag) !== 0) return true
  }
  return false
}

const INCOMPLETE = -1
const TEXT_AFTER_QUOTE = -2

/**
 * Where the quoted field opened at `open` ends: the index of the comma or newline after its closing
 * quote (of the CR of a CRLF); INCOMPLETE when the block ends first, TEXT_AFTER_QUOTE when something
 * else follows the closing quote.
 */
function quotedFieldEnd(bytes: Uint8Array, open: number): number {
  let close = open
  for (;;) {
    close = bytes.indexOf(QUOTE, close + 1)
    // A quote that ends the block may be the first of a `""`: the next bytes tell.
    if (close === -1 || close + 1 === bytes.length) return INCOMPLETE
    if (bytes[close + 1] !== QUOTE) break
    close++ // `""`, a quote inside the field
  }
  const after = bytes[close + 1]
  if (after === COMMA || after === LF) return close + 1
  if (after !== CR) return TEXT_AFTER_QUOTE
  if (close + 2 === bytes.length) return INCOMPLETE
  return bytes[close + 2] === LF ? close + 1 : TEXT_AFTER_QUOTE
}

/**
 * The quote that closes the quoted field opened at `open`, past `""` escapes; for a field that
 * `quotedFieldEnd` found closed (TEXT_AFTER_QUOTE): the record is read on after it.
 */
function closingQuote(bytes: Uint8Array, open: number): number {
  let close = bytes.indexOf(QUOTE, open + 1)
  while (bytes[close + 1] === QUOTE) close = bytes.indexOf(QUOTE, close + 2)
  return close
}

const repeat = (byte: number) => Math.imul(byte, 0x01010101)
const COMMA_WORD = repeat(COMMA)
const DOT_WORD = repeat(DOT)
const LOWER_E_WORD = repeat(LOWER_E)
/** The bit that makes an ASCII letter lower case, in each byte. */
const CASE_BITS = repeat(0x20)
const COLON_WORD = repeat(COLON)
const SLASH_WORD = repeat(SLASH)
/** Added to a byte below 0x80, these set its high bit when it is above `9`, or not below `,`. */
const ABOVE_9 = repeat(0x80 - 0x3a)
const BELOW_COMMA = repeat(0x80 - COMMA)
const LOW_7_BITS = 0x7f7f7f7f
const HIGH_BITS = 0x80808080 | 0
/** `#`: the byte after the quote. LF, CR and the quote are below it. */
const HASH = QUOTE + 1

/** The 4-byte-aligned whole words inside `bytes`, as 32-bit integers, and the index of the first. */
function alignedWords(bytes: Uint8Array): { words: Int32Array; wordsFrom: number } {
  const wordsFrom = (4 - (bytes.byteOffset & 3)) & 3
  if (bytes.length < wordsFrom + 4) return { words: new Int32Array(0), wordsFrom }
  const count = (bytes.length - wordsFrom) >>> 2
  return { words: new Int32Array(bytes.buffer, bytes.byteOffset + wordsFrom, count), wordsFrom }
}

/** The high bit of each byte of `word` that equals that byte of `pattern`; the other bits clear. */
/**
 * Nonzero when a byte of `word` is below `limit` (at most 128): the high bits it sets may be off by
 * a borrow, but never all clear when such a byte is there.
 */
function hasByteBelow(word: number, limit: number): number {
  return (word - Math.imul(limit, 0x01010101)) & ~word & HIGH_BITS
}

/**
 * The high bit of each byte of `word` that is not a digit, `-`, `.` or `,` (`isNumeric`, and the
 * comma the caller counts); the other bits clear. Bytes of 0x80 and up count as not numeric.
 */
function notNumeric(word: number): number {
  const low = word & LOW_7_BITS
  // `,` `-` `.` `/` and the digits are 0x2c to 0x39: one range, less the `/`. Per byte, no carry
  // into the next: a 7-bit value plus at most 0x54 stays below 0x100.
  const above9 = low + ABOVE_9
  const belowComma = ~(low + BELOW_COMMA)
  return ((above9 | belowComma | word) & HIGH_BITS) | bytesEqual(word, SLASH_WORD)
}

function bytesEqual(word: number, pattern: number): number {
  const x = word ^ pattern
  return ~(((x & LOW_7_BITS) + LOW_7_BITS) | x | LOW_7_BITS)
}

/** How many high bits `bytesEqual` set. */
function countBytes(highBits: number): number {
  return Math.imul(highBits >>> 7, 0x01010101) >>> 24
}

/**
 * JSON lines: every non-blank line must look like an object (`{` … `}`), else it is listed in
 * `refused`; so is a line that holds one of `faults` (text no sink holds, in byte order), for the
 * first of them. Values are not parsed. CRLF line ends are passed on as LF (`crs`), as in CSV.
 */
export function scanJsonl(bytes: Uint8Array, faults: readonly TextFault[] = NO_FAULTS): Scan {
  const blanks: number[] = []
  const crs: number[] = []
  const refused: ScanRefusal[] = []
  let start = 0
  let rows = 0
  let fault = 0
  let faultAt = faultByte(faults, fault, bytes.length)
  for (let newline = bytes.indexOf(LF); newline !== -1; newline = bytes.indexOf(LF, start)) {
    let first = start
    let last = newline - 1
    while (first <= last && isSpace(bytes[first] as number)) first++
    while (last >= first && isSpace(bytes[last] as number)) last--
    if (first > last) {
      blanks.push(start, newline + 1)
    } else if (bytes[first] !== OPEN_BRACE || bytes[last] !== CLOSE_BRACE) {
      refused.push({ start, end: newline + 1, problem: 'the line is not a JSON object' })
    } else if (faultAt <= newline) {
      refused.push({ start, end: newline + 1, problem: (faults[fault] as TextFault).problem })
    } else {
      rows++
      if (bytes[newline - 1] === CR) crs.push(newline - 1)
    }
    if (faultAt <= newline) {
      fault = faultAfter(faults, fault, newline)
      faultAt = faultByte(faults, fault, bytes.length)
    }
    start = newline + 1
  }
  return {
    end: start,
    rows,
    blanks,
    ...(crs.length > 0 ? { crs } : {}),
    ...(refused.length > 0 ? { refused } : {}),
  }
}

function isSpace(c: number): boolean {
  return c === SPACE || c === TAB || c === CR
}

const NO_CUTS: readonly number[] = []

/**
 * The bytes before `end` as they are passed on: blank lines, the CR of CRLF record ends and the
 * `refused` records (`[start, end)` of each, flattened) cut out, records with stray quotes
 * re-encoded by `reencode`. The body is copied only when there is something to change.
 */
export function passOn(
  bytes: Uint8Array,
  scan: Pick<Scan, 'end' | 'blanks' | 'strays' | 'crs'>,
  reencode: (record: Uint8Array) => Uint8Array,
  refused: readonly number[] = NO_CUTS,
): Uint8Array {
  const { end, blanks } = scan
  const strays = scan.strays ?? []
  const crs = scan.crs ?? []
  if (blanks.length === 0 && strays.length === 0 && crs.length === 0 && refused.length === 0)
    return bytes.subarray(0, end)
  // [start, end) of each cut, and the record to put there (strays) or nothing. Only a refused
  // record holds others (the scan listed its stray or CR before the record was refused).
  const cuts: [number, number, boolean][] = []
  for (let i = 0; i < blanks.length; i += 2) cuts.push([blanks[i] as number, blanks[i + 1] as number, false])
  for (let i = 0; i < refused.length; i += 2)
    cuts.push([refused[i] as number, refused[i + 1] as number, false])
  for (const cr of crs) cuts.push([cr, cr + 1, false])
  for (const stray of strays) cuts.push([stray, stray + firstRecordEnd(bytes.subarray(stray, end)), true])
  // At one start the longer cut comes first, and a cut before a re-encoding: the refused record.
  cuts.sort((a, b) => a[0] - b[0] || b[1] - a[1] || Number(a[2]) - Number(b[2]))
  const parts: Uint8Array[] = []
  let from = 0
  for (const [start, stop, record] of cuts) {
    if (start < from) continue // inside a refused record: cut out with it
    parts.push(bytes.subarray(from, start))
    if (record) parts.push(reencode(bytes.subarray(start, stop)))
    from = stop
  }
  parts.push(bytes.subarray(from, end))
  return Buffer.concat(parts)
}

/** Where the first CSV record of `bytes` ends (after its newline), or -1 when it is incomplete. */
export function firstRecordEnd(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === LF) return i + 1
    if (c === QUOTE && (i === 0 || bytes[i - 1] === COMMA)) {
      const after = quotedFieldEnd(bytes, i)
      if (after === INCOMPLETE) return -1
      // Text after a closing quote: the record is read on after the quote, as the scan reads it.
      i = after === TEXT_AFTER_QUOTE ? closingQuote(bytes, i) : after - 1
    }
  }
  return -1
}
