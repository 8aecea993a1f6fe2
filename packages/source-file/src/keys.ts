/**
 * The top-level keys of JSON-lines records, found without parsing values. A sink loads a JSON line
 * into the columns of the namespace's schema and drops any other key (PostgreSQL's
 * json_populate_record, DuckDB's read_json with given columns), so a key that first appears after a
 * file's sample must still reach the schema. Records mostly repeat the keys of the record before
 * them, byte for byte: each record's keys are compared with those of the last record whose keys
 * were decoded, and only a record whose keys differ is decoded.
 */
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  LF,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from './bytes.js'

const STRUCTURAL = new Uint8Array(256)
for (const c of [QUOTE, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, COMMA, COLON]) STRUCTURAL[c] = 1

export class KeyWatch {
  private readonly known: Set<string>
  /** The record whose keys were last decoded, and its keys' [start, end) byte ranges (quotes excluded). */
  private reference = new Uint8Array(0)
  private referenceKeys = new KeyRanges()
  /** Scratch: the current record's key ranges. */
  private readonly keys = new KeyRanges()

  constructor(known: Iterable<string>) {
    this.known = new Set(known)
  }

  /**
   * Where the records of `body` (whole JSON-object lines) that carry keys not seen before start;
   * their keys are known from then on.
   */
  recordsWithNewKeys(body: Uint8Array): number[] {
    const found: number[] = []
    for (let start = 0, end = body.indexOf(LF); start < body.length; end = body.indexOf(LF, start)) {
      if (end === -1) end = body.length
      findKeys(body, start, end, this.keys)
      if (!this.sameAsReference(body) && this.remember(body.subarray(start, end))) found.push(start)
      start = end + 1
    }
    return found
  }

  private sameAsReference(body: Uint8Array): boolean {
    const keys = this.keys
    const ref = this.referenceKeys
    if (keys.count !== ref.count) return false
    const reference = this.reference
    for (let k = 0; k < keys.count; k++) {
      const at = keys.starts[k]!
      const refAt = ref.starts[k]!
      const length = keys.ends[k]! - at
      if (length !== ref.ends[k]! - refAt) return false
      for (let i = 0; i < length; i++) if (body[at + i] !== reference[refAt + i]) return false
    }
    return true
  }

  /** Makes `record` the reference and learns its keys; true when one of them was new. */
  private remember(record: Uint8Array): boolean {
    this.reference = record.slice()
    this.referenceKeys = new KeyRanges()
    findKeys(this.reference, 0, this.reference.length, this.referenceKeys)
    let added = false
    for (const key of this.referenceKeys.decode(this.reference)) {
      if (!this.known.has(key)) {
        this.known.add(key)
        added = true
      }
    }
    return added
  }
}

/** The [start, end) byte ranges of one record's top-level keys, in reusable arrays. */
export class KeyRanges {
  count = 0
  starts = new Int32Array(16)
  ends = new Int32Array(16)

  push(start: number, end: number): void {
    if (this.count === this.starts.length) {
      const starts = new Int32Array(this.count * 2)
      const ends = new Int32Array(this.count * 2)
      starts.set(this.starts)
      ends.set(this.ends)
      this.starts = starts
      this.ends = ends
    }
    this.starts[this.count] = start
    this.ends[this.count++] = end
  }

  /** The keys as strings: the raw bytes may hold JSON escapes (`\u0062` is `b`). */
  decode(bytes: Uint8Array): string[] {
    const keys: string[] = []
    for (let k = 0; k < this.count; k++) {
      const raw = new TextDecoder().decode(bytes.subarray(this.starts[k], this.ends[k]))
      keys.push(raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw)
    }
    return keys
  }
}

/**
 * Finds the top-level keys of the JSON object in bytes[from, to): each string at depth 1 that opens
 * the object or follows a comma.
 */
export function findKeys(bytes: Uint8Array, from: number, to: number, out: KeyRanges): void {
  out.count = 0
  let depth = 0
  let keyNext = false
  for (let i = from; i < to; i++) {
    const c = bytes[i]!
    // Most bytes (digits, letters, spaces) change nothing: one table lookup passes them.
    if (STRUCTURAL[c] === 0) continue
    if (c === QUOTE) {
      let j = i + 1
      for (let d = bytes[j]; j < to && d !== QUOTE; d = bytes[j]) j += d === BACKSLASH ? 2 : 1
      if (depth === 1 && keyNext) out.push(i + 1, j)
      keyNext = false
      i = j
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++
      keyNext = depth === 1
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--
    } else if (c === COMMA) {
      keyNext = depth === 1
    } else if (c === COLON) {
      keyNext = false
    }
  }
}
