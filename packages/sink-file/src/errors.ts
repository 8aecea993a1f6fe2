import { SkipprError } from '@skippr/connector-api'

export const FILE_WRITE_FAILED = 'SKIPPR_FILE_WRITE_FAILED'
export const FILE_NOT_WRITABLE = 'SKIPPR_FILE_NOT_WRITABLE'

/** A failure that may pass (disk full, I/O error): the batch is retried and its files rewritten. */
export class FileWriteError extends SkipprError {
  constructor(file: string, cause: unknown) {
    super(
      FILE_WRITE_FAILED,
      `cannot write ${file}: ${messageOf(cause)}; the batch is written again on retry`,
      {
        cause,
      },
    )
  }
}

/** The output directory refuses writes (permissions, read-only file system): retrying will not help. */
export class FileNotWritableError extends SkipprError {
  constructor(file: string, cause: unknown) {
    super(
      FILE_NOT_WRITABLE,
      `cannot write ${file}: ${messageOf(cause)}; give skipprd write access to the File sink's path or change the path`,
      { cause },
    )
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
