import { open } from 'node:fs/promises'
import { BIKEHIRE_CSV_HEADER, BikehireEncoder, type BikehireFormat } from './bikehire.js'
import { DEFAULT_SEED } from './config.js'

export interface BikehireFileOptions {
  readonly rows: number
  readonly seed?: number
  readonly format: BikehireFormat
  /** CSV only: write the header row first (default true), as `read_csv` and `\copy … HEADER` expect. */
  readonly header?: boolean
}

/** Rows per write: big enough to amortise the syscall, small enough to keep memory flat. */
const ROWS_PER_WRITE = 20_000

/**
 * Writes the bikehire dataset to `path` (replacing it) as CSV or JSON lines, streaming: memory
 * stays at one block of rows whatever `rows` is. The rows are the ones the Sample source emits for
 * the same seed, so a benchmark can compare a File-source run with a Sample-source run.
 */
export async function writeBikehireFile(path: string, options: BikehireFileOptions): Promise<void> {
  const encoder = new BikehireEncoder(options.seed ?? DEFAULT_SEED, options.format)
  const file = await open(path, 'w')
  try {
    if (options.format === 'csv' && options.header !== false) await file.writeFile(BIKEHIRE_CSV_HEADER)
    for (let row = 0; row < options.rows; row += ROWS_PER_WRITE) {
      // writeFile on a handle writes all of it at the current position (write may write less).
      await file.writeFile(encoder.encode(row, Math.min(ROWS_PER_WRITE, options.rows - row)))
    }
  } finally {
    await file.close()
  }
}
