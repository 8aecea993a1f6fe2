import type { RefusedRow } from '@skippr/connector-api'
import type { Part } from './part-records.js'
import { RowBinaryWriter } from './row-binary.js'

/** A part's rows as RowBinary, and the rows refused (without the part's index, which the caller adds). */
export interface EncodedRows {
  readonly body: Uint8Array
  readonly rows: number
  readonly refused: Omit<RefusedRow, 'part'>[]
}

/**
 * A writer for the part's rows: RowBinary is about as long as the text it comes from, plus the key
 * on every row. The rows a part declares are trusted only as far as its body can hold them.
 */
export function partWriter(part: Part, key: Uint8Array): RowBinaryWriter {
  return new RowBinaryWriter(part.body.length + Math.min(part.rows, part.body.length + 1) * key.length)
}
