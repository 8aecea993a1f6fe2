/**
 * A closed stdout (`skipprd … | head -1`): the reader went away, and the next write into the pipe
 * fails with EPIPE. Node reports a failed write as an 'error' event on process.stdout, which ends the
 * process with a stack trace when nobody listens. The watch listens and tells the command, which
 * decides what it means: a reader command stops writing and ends quietly, `sync` stops as on a signal.
 */
import { SkipprError } from '@skippr/connector-api'

export const STDOUT_CLOSED = 'SKIPPR_STDOUT_CLOSED'

/** Thrown by a reader command's writes once stdout is gone, so that the command stops. */
export class StdoutClosedError extends SkipprError {
  constructor(override readonly cause: NodeJS.ErrnoException) {
    super(
      STDOUT_CLOSED,
      closedByReader(cause)
        ? 'stdout was closed by its reader'
        : `writing to stdout failed (${cause.code ?? cause.message}); nothing more can be printed`,
      { cause },
    )
  }
}

/** EPIPE: the reader went away on purpose (`| head`), which is no failure of the command. */
export function closedByReader(error: NodeJS.ErrnoException): boolean {
  return error.code === 'EPIPE'
}

export interface StdoutWatch {
  /** The write error that ended stdout, once there was one. */
  readonly error: NodeJS.ErrnoException | undefined
}

/**
 * Calls `onClosed` once, at the first write error of `stream` (every later write fails too). It
 * listens for the rest of the process: the error of a command's last write arrives after it returned.
 */
export function watchStdout(
  stream: NodeJS.WritableStream,
  onClosed: (error: NodeJS.ErrnoException) => void,
): StdoutWatch {
  let first: NodeJS.ErrnoException | undefined
  const listener = (error: NodeJS.ErrnoException): void => {
    if (first !== undefined) return
    first = error
    onClosed(error)
  }
  stream.on('error', listener)
  return {
    get error() {
      return first
    },
  }
}
