/**
 * What the sinks that record batch identities in the destination share: the names of their
 * bookkeeping tables, and the refusal of a writer whose lease a newer writer took over (its fence
 * token is lower than one that already wrote).
 */
import { SkipprError } from './errors.js'

/** The landed batches, one row per (pipeline, epoch, seq). */
export const BATCHES_TABLE = '_skippr_batches'
/** The highest fence token that wrote, per pipeline. */
export const FENCES_TABLE = '_skippr_fences'

export const FENCED = 'SKIPPR_FENCED'

/** A writer with an older lease tried to land a batch after a newer writer did: `fatal`. */
export class FencedError extends SkipprError {
  constructor(pipeline: string, token: bigint, highest: bigint, destination: string) {
    super(
      FENCED,
      `pipeline ${pipeline}: fence token ${token} is older than ${highest}, which already wrote to ${destination}; ` +
        'another skipprd holds the pipeline, stop this one',
    )
  }
}
