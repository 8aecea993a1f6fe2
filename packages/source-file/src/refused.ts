/**
 * The records of a block that cannot be passed on (connector-api's deadletter.ts): a record with
 * text no sink holds (text.ts), one the scan cannot read (scan.ts), one with a value that does not
 * fit its configured column or a line that is not JSON (schema.ts). Each is about that one record:
 * it is cut out of the block's body, not counted in its rows, and given in its chunk's `refused`,
 * so the records around it pass on and the position moves past it. A record is refused once: the
 * first reason found is the one given. Its `error` says what is wrong and where, and nothing to do
 * about it: the position is past it, so no later sync reads it again (a fix to the file would not
 * be seen).
 */
import type { RefusedRecord } from '@skippr/connector-api'
import { CR, LF } from './bytes.js'
import { FILE_BAD_RECORD, type FilePlace } from './errors.js'

/** A refused record: `[start, end)` in its block's records (through its newline), and why. */
export interface Refusal {
  readonly start: number
  readonly end: number
  readonly problem: string
}

export class Refusals {
  private readonly found: Refusal[] = []
  /** The starts of the records refused, made on the first refusal: most blocks have none. */
  private starts: Set<number> | undefined
  private sortedRanges: number[] | undefined
  /** Refused records that the scan had counted in its rows. */
  counted = 0

  get size(): number {
    return this.found.length
  }

  /** Whether the record starting at `start` is refused. */
  has(start: number): boolean {
    return this.starts?.has(start) === true
  }

  /** Refuses the record `[start, end)`, unless it is already; `counted`: the scan counted it in its rows. */
  add(start: number, end: number, problem: string, counted: boolean): void {
    this.starts ??= new Set()
    if (this.starts.has(start)) return
    this.starts.add(start)
    this.found.push({ start, end, problem })
    this.sortedRanges = undefined
    if (counted) this.counted++
  }

  /** `[start, end)` of each refused record in order, flattened: what is cut out of the body. */
  ranges(): readonly number[] {
    if (this.sortedRanges === undefined) this.sortedRanges = this.sorted().flatMap((r) => [r.start, r.end])
    return this.sortedRanges
  }

  /** `bytes` (the block's records from its start, or a head of them) without the refused records. */
  without(bytes: Uint8Array): Uint8Array {
    if (this.found.length === 0) return bytes
    const ranges = this.ranges()
    const parts: Uint8Array[] = []
    let from = 0
    for (let i = 0; i < ranges.length && (ranges[i] as number) < bytes.length; i += 2) {
      parts.push(bytes.subarray(from, ranges[i]))
      from = ranges[i + 1] as number
    }
    if (from < bytes.length) parts.push(bytes.subarray(from))
    return Buffer.concat(parts)
  }

  /**
   * The refused records as the contract gives them, in file order, and the line after `records`:
   * `records` are the block's, from byte `start` of `file`, whose line is `line`. Lines are
   * counted in one pass over the block.
   */
  records(
    namespace: string,
    file: string,
    records: Uint8Array,
    start: number,
    line: number,
  ): { refused: RefusedRecord[]; lineAfter: number } {
    const refused: RefusedRecord[] = []
    let counted = 0
    for (const { start: at, end, problem } of this.sorted()) {
      line += newlines(records, counted, at)
      counted = at
      refused.push({
        namespace,
        record: recordText(records.subarray(at, end)),
        error: refusalText({ file, line, byte: start + at }, problem),
        failureCode: FILE_BAD_RECORD,
        sourceUri: file,
        offsetKey: 'line',
        offsetPos: line,
      })
    }
    return { refused, lineAfter: line + newlines(records, counted, records.length) }
  }

  private sorted(): Refusal[] {
    return [...this.found].sort((a, b) => a.start - b.start)
  }
}

/** The newlines in `bytes[from, to)`: one native search per line, the fastest count measured. */
function newlines(bytes: Uint8Array, from: number, to: number): number {
  let count = 0
  for (let i = bytes.indexOf(LF, from); i !== -1 && i < to; i = bytes.indexOf(LF, i + 1)) count++
  return count
}

/** The `error` of a refused record: one line, where it is and what is wrong (`events.csv line 3 (byte 17): …`). */
export function refusalText(at: FilePlace, problem: string): string {
  return `${at.file} line ${at.line} (byte ${at.byte}): ${problem}`
}

/**
 * A record's bytes as deadletter text: without its line end, bytes that are not UTF-8 and NUL as
 * U+FFFD (no PostgreSQL text holds a NUL), a leading U+FEFF kept.
 */
export function recordText(record: Uint8Array): string {
  let end = record.length
  if (record[end - 1] === LF) end--
  if (record[end - 1] === CR) end--
  return new TextDecoder('utf-8', { ignoreBOM: true })
    .decode(record.subarray(0, end))
    .replaceAll('\0', '\uFFFD')
}
