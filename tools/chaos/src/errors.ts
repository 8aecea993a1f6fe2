/**
 * The chaos harness's errors, each with a stable `code` (match with `hasCode`). A failed exactly-once
 * check is not an error: it is the FAIL verdict of the report.
 */
import { SkipprError } from '@skippr/connector-api'

export const CHAOS_USAGE = 'SKIPPR_CHAOS_USAGE'
export const CHAOS_NOT_BUILT = 'SKIPPR_CHAOS_NOT_BUILT'

/** A bad command-line argument or option value. */
export class ChaosUsageError extends SkipprError {
  constructor(message: string) {
    super(CHAOS_USAGE, `${message} (see tools/chaos/README.md)`)
  }
}

/** The harness runs the built CLI, and it is not there. */
export class SkipprdNotBuiltError extends SkipprError {
  constructor(cliPath: string, cause?: unknown) {
    super(
      CHAOS_NOT_BUILT,
      `skipprd is not built (${cliPath} missing): run pnpm turbo run build --filter=skipprd... first`,
      { cause },
    )
  }
}
