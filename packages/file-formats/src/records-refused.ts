/**
 * The rows of a file's parts that hold a value the file cannot hold, all found in one pass and
 * thrown together once it is done, so that a sink answers `refused` naming every one
 * (connector-api's sink.ts): the runner sets them aside as deadletters and writes the rest again.
 */
import { SkipprError } from '@skippr/connector-api'

export const RECORDS_REFUSED = 'SKIPPR_RECORDS_REFUSED'

/** A row refused for a value: where it is, as a sink's `RefusedRow` says it, and why. */
export interface RecordRefusal {
  /** The part's index in the parts given to `encodeFile`, from 0. */
  readonly part: number
  /** The record's index in its part's body, from 0, as connector-api's `recordRanges` counts them. */
  readonly row: number
  /** One line naming the namespace, the field and the value, and why the file cannot hold it. */
  readonly error: string
  /** `SKIPPR_BAD_RECORD`. */
  readonly code: string
}

/**
 * Some rows of a file's parts hold a value the file cannot hold; nothing of the file was made.
 * `refusals` names every such row, in part and row order, each once (for its first bad value).
 */
export class RecordsRefusedError extends SkipprError {
  readonly refusals: readonly RecordRefusal[]

  constructor(
    where: { readonly target: string; readonly batch: string },
    refusals: readonly RecordRefusal[],
  ) {
    const first = refusals[0]
    super(
      RECORDS_REFUSED,
      `${where.target}, batch ${where.batch}: ${refusals.length} row(s) hold a value the file cannot hold, ` +
        `so nothing of it was written; the first is row ${(first?.row ?? 0) + 1} of part ${(first?.part ?? 0) + 1}: ` +
        `${first?.error ?? ''}`,
    )
    this.refusals = refusals
  }
}
