/**
 * A block of whole records read from one file, and what of it is passed on. The reader refuses the
 * records it cannot read or whose text no sink holds; the schema tracker then refuses those whose
 * values it cannot take (refused.ts). The body is cut from the records once all are known, so it
 * holds exactly the records not refused, as `passOn` (scan.ts) gives them.
 */
import { reencodeRecord } from './csv.js'
import type { FilePosition } from './offset.js'
import type { Refusals } from './refused.js'
import { passOn, type Scan } from './scan.js'

export class Block {
  constructor(
    /** The records as they are in the file, from byte `start`: blank lines and refused records too. */
    readonly records: Uint8Array,
    readonly start: number,
    readonly position: FilePosition,
    private readonly scan: Scan,
    readonly refused: Refusals,
  ) {}

  /** CSV: `[record start, column]` of values that may not fit their column's type (`Scan.misfits`), flattened. */
  get misfits(): readonly number[] | undefined {
    return this.scan.misfits
  }

  /** The records passed on: those the scan counted, less the ones refused since. */
  get rows(): number {
    return this.scan.rows - this.refused.counted
  }

  /** What is passed on: the records without blank lines and refused records. */
  body(): Uint8Array {
    return passOn(this.records, this.scan, reencodeRecord, this.refused.ranges())
  }
}
