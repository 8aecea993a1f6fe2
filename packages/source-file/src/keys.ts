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
import {
  type Field,
  type FieldType,
  findKeys,
  jsonValueType,
  KeyRanges,
  widenFieldType,
} from '@skippr/connector-api'
import { LF } from './bytes.js'
import { checkOf, fits } from './fit.js'

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
