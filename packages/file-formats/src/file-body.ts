/**
 * The bytes of one output file holding parts of one namespace. JSON lines and CSV are the parts'
 * bodies as committed where their format (and, for CSV, their columns) matches, converted where
 * not; Parquet is typed from the parts' schemas. Every part's records are counted in the bytes
 * about to be written and compared with its declared rows before anything is written.
 */
import type { Field } from '@skippr/connector-api'
import {
  countRecords,
  csvHeader,
  evolveSchema,
  RowCountMismatchError,
  transcode,
} from '@skippr/connector-api'
import { compressChunks, zstdReady } from './compression.js'
import type { Compression, FileEncoding } from './encoding.js'
import { parquetFile } from './parquet.js'
import type { FilePart } from './part-reader.js'

/** Where the file goes and which batch it holds, for the messages of a refused file. */
export interface FileTarget {
  /** The destination as a message shows it: `file out/orders/….csv`, `object s3://b/k`. */
  readonly target: string
  /** The batch's `batchKey`. */
  readonly batch: string
}

const NEWLINE = new Uint8Array([10])

/**
 * The file's bytes, in chunks to be written one after another. Throws, and the caller writes
 * nothing of the batch then: for Parquet, `RecordsRefusedError` naming every row with a value the
 * file cannot hold (by its index in `parts` and its record, as `recordRanges` counts them);
 * `BadRecordError` for a value that cannot be converted between JSON lines and CSV, and for a
 * Parquet part that is not well-formed; `RowCountMismatchError` for a part whose records are not
 * as many as it declares.
 */
export async function encodeFile(
  parts: readonly FilePart[],
  encoding: FileEncoding,
  where: FileTarget,
): Promise<Uint8Array[]> {
  const header = mergedHeader(parts)
  if (encoding.format === 'parquet') return parquetBody(parts, header, encoding.compression, where)
  return compressChunks(textFile(parts, encoding.format, header, where), encoding.compression)
}

/** A Parquet file compresses inside, page by page: its bytes are not compressed again. */
async function parquetBody(
  parts: readonly FilePart[],
  header: readonly Field[],
  compression: Compression,
  where: FileTarget,
): Promise<Uint8Array[]> {
  // hyparquet-writer calls its compressors synchronously: zstd's WebAssembly must be loaded first.
  if (compression === 'zstd') await zstdReady()
  return parquetFile(parts, header, where.target, where.batch, compression)
}

/** The union of the parts' columns: a part of an older schema version has NULL in the newer ones. */
function mergedHeader(parts: readonly FilePart[]): readonly Field[] {
  const first = parts[0]
  if (!first) throw new Error('a file needs at least one part')
  return parts.reduce((merged, part) => evolveSchema(merged, part.schema), first.schema).fields
}

function textFile(
  parts: readonly FilePart[],
  format: 'jsonl' | 'csv',
  header: readonly Field[],
  where: FileTarget,
): Uint8Array[] {
  const chunks = format === 'csv' ? [csvHeader(header)] : []
  for (const part of parts) {
    const body = transcode(part, format, header)
    const written = countRecords(body, format)
    if (written !== part.rows)
      throw new RowCountMismatchError({ ...where, expected: part.rows, loaded: written })
    chunks.push(body)
    if (body.length > 0 && body[body.length - 1] !== 10) chunks.push(NEWLINE)
  }
  return chunks
}
