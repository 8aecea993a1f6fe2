/**
 * The Stdout sink, for debugging (tier `none`): prints each batch's rows. CSV gets a header row per
 * part, since parts of one batch may belong to different namespaces.
 */
import type { RecordFormat, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import {
  BAD_RECORD,
  batchKey,
  cannotLand,
  countRecords,
  csvHeader,
  hasCode,
  landed,
  ROW_COUNT_MISMATCH,
  RowCountMismatchError,
  retryLater,
  transcode,
} from '@skippr/connector-api'
import type { StdoutConfig } from './config.js'
import { StdoutClosedError, StdoutWriteError } from './errors.js'

/** What the sink prints to: `process.stdout`, or any stream with the same `write`. */
export interface Output {
  write(chunk: Uint8Array, callback: (error?: Error | null) => void): boolean
  on?(event: 'error', listener: (error: Error) => void): unknown
}

const NEWLINE = new Uint8Array([10])

export class StdoutSink implements Sink {
  readonly guarantee = 'none' as const
  private readonly format: RecordFormat | undefined

  constructor(
    config: StdoutConfig,
    private readonly out: Output = process.stdout,
  ) {
    this.format = config.format
    // A stream also emits a write's error as an 'error' event, which would crash the process when
    // unhandled; the write's callback already reports it as this batch's outcome.
    out.on?.('error', () => {})
  }

  async prepare(): Promise<void> {}

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    // Every part's bytes first: a record that cannot be converted, or a part whose records are not as
    // many as it declares, refuses the batch before anything is printed.
    let chunks: Uint8Array[]
    try {
      chunks = batch.parts.flatMap((part) => {
        const format = this.format ?? part.format
        const body = transcode(part, format, part.schema.fields)
        const printed = countRecords(body, format)
        if (printed !== part.rows)
          throw new RowCountMismatchError({
            target: `stdout (namespace ${part.namespace})`,
            batch: batchKey(batch.id),
            expected: part.rows,
            loaded: printed,
          })
        const ended = body.length === 0 || body[body.length - 1] === 10 ? [body] : [body, NEWLINE]
        return format === 'csv' ? [csvHeader(part.schema.fields), ...ended] : ended
      })
    } catch (error) {
      return hasCode(error, BAD_RECORD) || hasCode(error, ROW_COUNT_MISMATCH)
        ? cannotLand(error)
        : retryLater(error)
    }
    try {
      for (const chunk of chunks) await this.print(chunk)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      return code === 'EPIPE'
        ? cannotLand(new StdoutClosedError(error))
        : retryLater(new StdoutWriteError(error))
    }
    return landed(batch.parts.reduce((sum, part) => sum + part.rows, 0))
  }

  async close(): Promise<void> {}

  /** Resolves once the chunk is handed to the OS, so a closed pipe is reported by this write. */
  private print(chunk: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      this.out.write(chunk, (error) => (error ? reject(error) : resolve()))
    })
  }
}
