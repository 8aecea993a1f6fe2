/**
 * The top-level keys of JSON-lines records, found without parsing values. A sink loads a JSON line
 * into the columns of the namespace's schema and drops any other key (PostgreSQL's
 * json_populate_record, DuckDB's read_json with given columns), so a key that first appears after a
 * file's sample must still reach the schema. Records mostly repeat the keys of the record before
 * them, byte for byte: each record's keys are compared with those of the last record whose keys
 * were decoded, and only a record whose keys differ is decoded.
 *
 * The same walk cuts out each top-level value, so that every record's values of the columns a sink
 * could alter silently are checked against their types (fit.ts): a value after the sample that does
 * not fit widens its column, as the sample would have, or, where columns are not widened (a
 * configured schema), is reported with its record.
 */
import { type Field, type FieldType, widenFieldType } from '@skippr/connector-api'
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
import { checkOf, fits } from './fit.js'
import { jsonValueType } from './infer.js'

const STRUCTURAL = new Uint8Array(256)
for (const c of [QUOTE, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, COMMA, COLON]) STRUCTURAL[c] = 1

/** What one block's records brought: where those with new keys start, and the columns their values widen. */
export interface Findings {
  readonly recordsWithNewKeys: number[]
  readonly widened: Field[]
  /** Without widening: the first value of each record that did not fit its column, what a configured schema refuses. */
  readonly misfits: Misfit[]
}

/** A value that does not fit its column's type: where its record starts, and the wider type it needs. */
export interface Misfit {
  readonly at: number
  readonly column: Field
  readonly value: string
  readonly wider: FieldType
}

const NOTHING_SKIPPED: readonly number[] = []

export class KeyWatch {
  private known = new Set<string>()
  /** The schema's column types: watched values are checked against them (fit.ts). */
  private columns = new Map<string, FieldType>()
  /** The record whose keys were last decoded, its keys' [start, end) byte ranges (quotes excluded) and names. */
  private reference = new Uint8Array(0)
  private referenceKeys = new KeyRanges()
  private referenceNames: string[] = []
  /** The reference's keys whose values are checked, by index, and the type each is checked against. */
  private watchedKeys: number[] = []
  private watchedChecks: number[] = []
  /** Scratch: the current record's key ranges. */
  private readonly keys = new KeyRanges()
  private readonly widened = new Set<string>()
  private misfits: Misfit[] = []

  /** `widening`: a value that does not fit widens its column; else it is reported (`Findings.misfits`). */
  constructor(private readonly widening = true) {}

  /** An independent copy: what it learns from now on leaves this one as it is. */
  copy(): KeyWatch {
    const copy = new KeyWatch(this.widening)
    copy.known = new Set(this.known)
    copy.columns = new Map(this.columns)
    // Replaced, never changed in place.
    copy.reference = this.reference
    copy.referenceKeys = this.referenceKeys
    copy.referenceNames = this.referenceNames
    copy.watchedKeys = this.watchedKeys
    copy.watchedChecks = this.watchedChecks
    return copy
  }

  /** Learns the schema's columns and their types: records read from now on are checked against them. */
  follow(fields: readonly Field[]): void {
    for (const field of fields) {
      this.known.add(field.name)
      this.columns.set(field.name, field.type)
    }
    this.watchReference()
  }

  /**
   * Looks at every record of `body` (whole JSON-object lines) but the `skip`ped ones (`[start, end)`
   * of whole lines, in order, flattened): where those that carry keys not seen before start (their
   * keys are known from then on), and the columns that a value does not fit, widened to hold it
   * (their new types are checked from then on).
   */
  scan(body: Uint8Array, skip: readonly number[] = NOTHING_SKIPPED): Findings {
    const found: number[] = []
    const keys = this.keys
    let skipped = 0
    let skipAt = skip.length > 0 ? skip[0]! : -1
    for (let start = 0; start < body.length; ) {
      if (start === skipAt) {
        start = skip[skipped + 1]!
        skipped += 2
        skipAt = skipped < skip.length ? skip[skipped]! : -1
        continue
      }
      let end = body.indexOf(LF, start)
      if (end === -1) end = body.length
      findKeys(body, start, end, keys)
      if (!this.sameAsReference(body) && this.remember(body.subarray(start, end))) found.push(start)
      const watched = this.watchedKeys
      const checks = this.watchedChecks
      const { valueStarts, valueEnds } = keys
      for (let w = 0; w < watched.length; w++) {
        const k = watched[w]!
        if (!fits(body, valueStarts[k]!, valueEnds[k]!, checks[w]!)) this.widen(k, keys.value(body, k), start)
      }
      start = end + 1
    }
    const widened = [...this.widened].map((name) => ({ name, type: this.columns.get(name)! }))
    const misfits = this.misfits
    this.widened.clear()
    this.misfits = []
    return { recordsWithNewKeys: found, widened, misfits }
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
    this.referenceNames = this.referenceKeys.decode(this.reference)
    let added = false
    for (const key of this.referenceNames) {
      if (!this.known.has(key)) {
        this.known.add(key)
        added = true
      }
    }
    this.watchReference()
    return added
  }

  private watchReference(): void {
    this.watchedKeys = []
    this.watchedChecks = []
    this.referenceNames.forEach((name, k) => {
      const check = checkOf(this.columns.get(name) ?? 'string')
      if (check !== 0) {
        this.watchedKeys.push(k)
        this.watchedChecks.push(check)
      }
    })
  }

  /** The value of the reference's key `k` did not pass `fits`: judged whole, it may widen the column. */
  private widen(k: number, value: string, at: number): void {
    const name = this.referenceNames[k]!
    const column = this.columns.get(name)!
    let type: FieldType | undefined
    try {
      type = jsonValueType(value)
    } catch {
      return // not valid JSON: the sink refuses the line
    }
    const wider = type === undefined ? column : widenFieldType(column, type)
    if (wider === column) return
    if (!this.widening) {
      if (this.misfits.at(-1)?.at !== at)
        this.misfits.push({ at, column: { name, type: column }, value, wider })
      return
    }
    this.columns.set(name, wider)
    this.widened.add(name)
    this.watchReference()
  }
}

/**
 * The [start, end) byte ranges of one record's top-level keys (quotes excluded) and of their values
 * (the bytes between the colon and the next comma or the closing brace), in reusable arrays.
 */
export class KeyRanges {
  count = 0
  starts = new Int32Array(16)
  ends = new Int32Array(16)
  valueStarts = new Int32Array(16)
  valueEnds = new Int32Array(16)

  push(start: number, end: number): void {
    if (this.count === this.starts.length) {
      this.starts = grown(this.starts)
      this.ends = grown(this.ends)
      this.valueStarts = grown(this.valueStarts)
      this.valueEnds = grown(this.valueEnds)
    }
    this.starts[this.count] = start
    this.ends[this.count] = end
    // An empty value until its colon and end are seen: a record cut short has none.
    this.valueStarts[this.count] = end
    this.valueEnds[this.count++] = end
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

  /** The source text of key `k`'s value, without the whitespace around it. */
  value(bytes: Uint8Array, k: number): string {
    return new TextDecoder().decode(bytes.subarray(this.valueStarts[k], this.valueEnds[k])).trim()
  }
}

function grown(array: Int32Array): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(array.length * 2)
  bigger.set(array)
  return bigger
}

/**
 * Finds the top-level keys of the JSON object in bytes[from, to), each string at depth 1 that opens
 * the object or follows a comma, and the value after each.
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
      if (depth === 1 && out.count > 0) out.valueEnds[out.count - 1] = i
      depth--
    } else if (c === COMMA) {
      keyNext = depth === 1
      if (keyNext && out.count > 0) out.valueEnds[out.count - 1] = i
    } else if (c === COLON) {
      keyNext = false
      if (depth === 1 && out.count > 0) out.valueStarts[out.count - 1] = i + 1
    }
  }
}
