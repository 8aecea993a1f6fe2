import type { NamespaceSchema, ReadOptions, Source, SourceChunk, SourceOffset } from '@skippr/connector-api'
import { BIKEHIRE_NAMESPACE, BikehireEncoder, bikehireSchema } from './bikehire.js'
import { DEFAULT_BATCH_ROWS, DEFAULT_SEED, type SampleConfig } from './config.js'
import { SampleOffsetError } from './errors.js'

/** The position after the rows emitted so far: `{ row: n }` means rows 0..n-1 are done. */
export interface SampleOffset {
  readonly row: number
}

/**
 * The bikehire dataset as a source. The data is finite: with `follow` true or false the source
 * ends after `rows` rows, so a follow-mode sync idles once it has them. Raising `rows` later makes
 * the next run produce just the new rows, because row i never depends on the row count.
 */
export class SampleSource implements Source {
  private readonly seed: number
  private readonly batchRows: number

  constructor(private readonly config: SampleConfig) {
    this.seed = config.seed ?? DEFAULT_SEED
    this.batchRows = config.batch_rows ?? DEFAULT_BATCH_ROWS
  }

  async discover(): Promise<NamespaceSchema[]> {
    return [bikehireSchema]
  }

  async *read(from: SourceOffset | undefined, options: ReadOptions): AsyncIterable<SourceChunk> {
    const encoder = new BikehireEncoder(this.seed, 'csv')
    for (let row = startRow(from); row < this.config.rows; ) {
      if (options.signal.aborted) return
      const rows = Math.min(this.batchRows, this.config.rows - row)
      const body = encoder.encode(row, rows).slice()
      row += rows
      yield { namespace: BIKEHIRE_NAMESPACE, format: 'csv', rows, body, offset: { row } }
    }
  }

  /** The configured `rows`: the dataset is generated, so it holds every one of them now. */
  async count(namespace: string): Promise<number> {
    return namespace === BIKEHIRE_NAMESPACE ? this.config.rows : 0
  }

  async close(): Promise<void> {}
}

function startRow(from: SourceOffset | undefined): number {
  if (from === undefined || from === null) return 0
  const row = typeof from === 'object' && !Array.isArray(from) ? (from as { row?: unknown }).row : undefined
  if (typeof row !== 'number' || !Number.isSafeInteger(row) || row < 0) throw new SampleOffsetError(from)
  return row
}
