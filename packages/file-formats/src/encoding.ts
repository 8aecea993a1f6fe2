/**
 * How an output file is encoded: its record format and its compression. The file and object
 * sinks share these config fields, so every destination of files names them the same way.
 */
import * as v from 'valibot'

export const FILE_FORMATS = ['jsonl', 'csv', 'parquet'] as const
export type FileFormat = (typeof FILE_FORMATS)[number]

export const COMPRESSIONS = ['none', 'gzip', 'zstd'] as const
export type Compression = (typeof COMPRESSIONS)[number]

export interface FileEncoding {
  readonly format: FileFormat
  readonly compression: Compression
}

/** The config fields of an encoding, for a sink's valibot schema: `format` required, `compression` default none. */
export const encodingFields = {
  format: v.pipe(
    v.picklist(FILE_FORMATS),
    v.description('The output files: jsonl (JSON lines), csv (with a header row) or parquet (typed columns)'),
  ),
  compression: v.optional(
    v.pipe(
      v.picklist(COMPRESSIONS),
      v.description(
        'none, gzip or zstd: the whole file for jsonl and csv; inside the file, per column chunk, for parquet',
      ),
    ),
    'none',
  ),
}

/**
 * The file name's extension: `jsonl`, `csv.gz`, `jsonl.zst`. A compressed Parquet file is still
 * `parquet`: its compression is inside, per column chunk, where every Parquet reader looks for it.
 */
export function fileExtension(encoding: FileEncoding): string {
  if (encoding.format === 'parquet') return 'parquet'
  const suffix = { none: '', gzip: '.gz', zstd: '.zst' }[encoding.compression]
  return `${encoding.format}${suffix}`
}

/** The MIME type an object store records for the file. */
export function contentType(encoding: FileEncoding): string {
  if (encoding.format === 'parquet') return 'application/vnd.apache.parquet'
  if (encoding.compression === 'gzip') return 'application/gzip'
  if (encoding.compression === 'zstd') return 'application/zstd'
  return encoding.format === 'csv' ? 'text/csv' : 'application/x-ndjson'
}
