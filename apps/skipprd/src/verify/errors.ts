/** Errors of `skipprd verify`, each with a stable `code`; match with `hasCode`. */
import { SkipprError } from '@skippr/connector-api'

export const VERIFY_NO_SINK = 'SKIPPR_VERIFY_NO_SINK'

/** A pipeline without `data_sink` keeps its rows in the WAL: there is no destination to compare. */
export class VerifyNoSinkError extends SkipprError {
  constructor(pipeline: string) {
    super(
      VERIFY_NO_SINK,
      `pipeline '${pipeline}' has no data_sink: verify compares the source with a destination; its rows stay in the WAL (skipprd query --sql "SHOW STATS FOR ${pipeline}" counts them)`,
    )
  }
}
