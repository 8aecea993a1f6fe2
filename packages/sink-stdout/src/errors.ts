import { SkipprError } from '@skippr/connector-api'

export const STDOUT_CLOSED = 'SKIPPR_STDOUT_CLOSED'
export const STDOUT_WRITE_FAILED = 'SKIPPR_STDOUT_WRITE_FAILED'

/** The reader of stdout went away (a closed pipe, e.g. `| head`): nothing more can be printed. */
export class StdoutClosedError extends SkipprError {
  constructor(cause: unknown) {
    super(STDOUT_CLOSED, 'stdout was closed by its reader; keep the reading end open or use another sink', {
      cause,
    })
  }
}

export class StdoutWriteError extends SkipprError {
  constructor(cause: unknown) {
    super(
      STDOUT_WRITE_FAILED,
      `writing to stdout failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    )
  }
}
