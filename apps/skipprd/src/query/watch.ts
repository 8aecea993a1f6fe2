/**
 * `skipprd query --sql … --watch <seconds>`: the statements again every interval, each round over a
 * fresh snapshot of the WAL (the session refreshes before every statement), until SIGINT or SIGTERM.
 * On a terminal each round replaces the last, as watch(1) does, under a line naming the interval and
 * the time; to a pipe the rounds follow one another, nothing but their results.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { InvalidArgumentError } from 'commander'

/** The longest interval taken: beyond it a typo (`--watch 5000` meant as ms) is likelier than intent. */
const MAX_WATCH_SECONDS = 24 * 60 * 60

/** commander's parser of `--watch`: seconds, a number above 0 (fractions allowed: `0.5`). */
export function watchSeconds(text: string): number {
  const seconds = Number(text)
  if (!(text.trim() !== '' && Number.isFinite(seconds) && seconds > 0 && seconds <= MAX_WATCH_SECONDS)) {
    throw new InvalidArgumentError(`takes seconds, a number above 0 and at most ${MAX_WATCH_SECONDS}`)
  }
  return seconds
}

export interface WatchOptions {
  readonly seconds: number
  /** The statements, as the header line shows them. */
  readonly sql: string
  /** Ends the watch (the command's SIGINT/SIGTERM). */
  readonly stop: AbortSignal
  /** Whether stdout is a terminal: each round then clears the screen first. */
  readonly terminal: boolean
  readonly out: (text: string) => void
}

/** ANSI: clear the screen and move the cursor home. */
const CLEAR_SCREEN = '\u001b[2J\u001b[H'

/** Runs `round` now and then every `seconds` after the last one ended, until `stop`; a failing round ends it. */
export async function watch(round: () => Promise<void>, options: WatchOptions): Promise<void> {
  const { seconds, stop, out } = options
  while (!stop.aborted) {
    if (options.terminal) {
      out(`${CLEAR_SCREEN}Every ${seconds}s: ${options.sql.trim()}    ${new Date().toISOString()}\n\n`)
    }
    await round()
    try {
      await sleep(seconds * 1000, undefined, { signal: stop })
    } catch {
      // Stopped while waiting for the next round: the watch is over.
    }
  }
}
