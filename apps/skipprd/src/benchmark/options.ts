/** `skipprd benchmark`'s own flags, parsed when the command line is (program.ts imports this alone). */
import { InvalidArgumentError } from 'commander'

export const DEFAULT_ROWS = 1_000_000
export const DEFAULT_ROUNDS = 3

/** commander's parser of `--rows` and `--rounds`: a whole number above 0 (`1_000_000` or `1,000,000` too). */
export function positiveCount(text: string): number {
  const n = Number(text.replace(/[_,]/g, ''))
  if (!(text.trim() !== '' && Number.isSafeInteger(n) && n > 0))
    throw new InvalidArgumentError('takes a whole number above 0')
  return n
}
