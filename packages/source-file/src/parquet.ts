/**
 * One Parquet file, read from a row. Unlike CSV and JSON lines, a Parquet file's bytes cannot pass
 * on as they are: its rows are decoded (hyparquet) and encoded as the contract's CSV. The position
 * is a row number: a Parquet file is written whole, so nothing is ever appended to one; a file
 * rewritten under the same name has another footer, which the fingerprint (a hash of the footer)
 * tells. A file whose footer is not there yet is still being written, and is left for a later read.
 */
import { createHash } from 'node:crypto'
import type { FileHandle } from 'node:fs/promises'
import { encodeCsv, type Field, type Logger } from '@skippr/connector-api'
import {
  type AsyncBuffer,
  type ColumnData,
  type Compressors,
  type FileMetaData,
  parquetMetadataAsync,
  parquetRead,
} from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import {
  FileReadError,
  ParquetInvalidError,
  ParquetTextInvalidError,
  ParquetValueTooLongError,
} from './errors.js'
import { type MatchedFile, openMatched, stamp } from './match.js'
import type { FilePosition } from './offset.js'
import { type ParquetColumn, parquetColumns, parsers, withRawDecimals } from './parquet-schema.js'

const MAGIC = Buffer.from('PAR1')
/** Magic, then the footer's length, at the end of every complete file. */
const TAIL_BYTES = 8
/**
 * Rows decoded at once: a row group larger than this is decoded in slices of this many, which bounds
 * memory. Each slice decodes its group's pages up to its end, so slicing costs time: DuckDB's groups
 * (122,880 rows) are decoded whole.
 */
const SLICE_ROWS = 262_144
/** The first chunk's rows, before the encoded size of a row is known. */
const FIRST_CHUNK_ROWS = 100

/** Rows read from a Parquet file, as CSV, and the position after them. */
export interface ParquetBlock {
  readonly body: Uint8Array
  readonly rows: number
  readonly position: FilePosition
}

/**
 * Decoded rows of the file up to row `end`, as columns: each column in the pieces the decoder gave,
 * each piece knowing its rows (a piece may start before the row asked for). Columns keep one array
 * per page, where rows as objects would be as many objects as rows, each living until its chunk is
 * encoded (the collector's costliest case).
 */
interface Slice {
  readonly end: number
  readonly columns: Map<string, ColumnData[]>
}

export class ParquetReader {
  private slice: Slice = { end: 0, columns: new Map() }
  private rowsPerChunk = FIRST_CHUNK_ROWS

  private constructor(
    readonly file: MatchedFile,
    private readonly handle: FileHandle,
    private readonly buffer: AsyncBuffer,
    private readonly metadata: FileMetaData,
    /** `metadata` as decoding takes it (withRawDecimals). */
    private readonly decoding: FileMetaData,
    readonly columns: readonly ParquetColumn[],
    /** The rows of its row groups: what is read, whatever the footer's own count says. */
    private readonly rows: number,
    private readonly ino: string,
    private readonly fp: string,
    /** The file's `stamp` when it was opened. */
    readonly stamp: string,
    private row: number,
  ) {}

  /**
   * Opens `file` to read after `previous`: undefined when it vanished since it was listed, or when
   * its footer is not written yet (logged).
   */
  static async open(
    file: MatchedFile,
    previous: FilePosition | undefined,
    logger: Logger,
  ): Promise<ParquetReader | undefined> {
    return openMatched(file, async (handle, stats) => {
      const { size, ino } = stats
      const buffer = fileBuffer(file, handle, size)
      const completeness = await completenessOf(buffer)
      // A writer writes the leading magic first: a file without it is no Parquet file being written.
      if (completeness === 'not-parquet')
        throw new ParquetInvalidError(
          file.key,
          new Error('it does not start with the Parquet magic bytes PAR1'),
        )
      if (completeness === 'no-footer') {
        logger.warn('not a complete Parquet file yet (no footer): it is read once complete', {
          file: file.key,
          bytes: size,
        })
        return undefined
      }
      const metadata = await parquetMetadataAsync(buffer).catch((error: unknown) => {
        throw new ParquetInvalidError(file.key, error)
      })
      const columns = parquetColumns(file.key, metadata)
      const rows = metadata.row_groups.reduce((sum, group) => sum + Number(group.num_rows), 0)
      // DuckDB and Arrow read the row groups; a footer count that disagrees is the writer's slip.
      if (rows !== Number(metadata.num_rows))
        logger.warn('the footer counts other rows than its row groups hold: reading the row groups', {
          file: file.key,
          footer_rows: Number(metadata.num_rows),
          row_group_rows: rows,
        })
      const fp = await footerFingerprint(buffer, metadata)
      let row = 0
      if (previous && previous.pos > 0) {
        if (previous.fp === fp) row = previous.pos
        else logger.warn('file was replaced since it was read: reading it from the start', { file: file.key })
      }
      return new ParquetReader(
        file,
        handle,
        buffer,
        metadata,
        withRawDecimals(metadata),
        columns,
        rows,
        String(ino),
        fp,
        stamp(stats),
        row,
      )
    })
  }

  get fields(): Field[] {
    return this.columns.map((c) => c.field)
  }

  get position(): FilePosition {
    return { pos: this.row, ino: this.ino, fp: this.fp }
  }

  /** The next rows, about `bytes` of them as CSV, in the order of `fields`; undefined at the end. */
  async next(bytes: number, fields: readonly Field[]): Promise<ParquetBlock | undefined> {
    if (this.row >= this.rows) return undefined
    if (this.row >= this.slice.end) await this.decodeSliceAt(this.row)
    const to = Math.min(this.slice.end, this.row + this.rowsPerChunk)
    const body = encodeCsv(this.records(this.row, to), fields)
    const rows = to - this.row
    this.row = to
    // The next chunk aims at `bytes` with this chunk's bytes per row.
    this.rowsPerChunk = Math.max(1, Math.round((bytes * rows) / Math.max(1, body.length)))
    if (this.row >= this.slice.end) this.slice = { end: 0, columns: new Map() }
    return { body, rows, position: this.position }
  }

  async close(): Promise<void> {
    await this.handle.close()
  }

  /** Decodes rows from `row` to the end of its row group or SLICE_ROWS, whichever comes first. */
  private async decodeSliceAt(row: number): Promise<void> {
    let groupEnd = 0
    for (const group of this.metadata.row_groups) {
      groupEnd += Number(group.num_rows)
      if (groupEnd > row) break
    }
    const end = Math.min(groupEnd, row + SLICE_ROWS)
    const columns = new Map<string, ColumnData[]>()
    await parquetRead({
      file: this.buffer,
      metadata: this.decoding,
      rowStart: row,
      rowEnd: end,
      compressors: emptyPageSafe,
      parsers,
      // Text columns are annotated as such; a byte array without that is binary (base64, not UTF-8).
      utf8: false,
      useOffsetIndex: true,
      onChunk: (piece) => {
        const pieces = columns.get(piece.columnName) ?? []
        pieces.push(piece)
        columns.set(piece.columnName, pieces)
      },
    }).catch((error: unknown) => {
      throw decodeError(this.file.key, row, end, error)
    })
    this.slice = { end, columns }
  }

  /** Rows `from` to `to` of the slice as objects keyed by column name, each value as a cell. */
  private records(from: number, to: number): Record<string, unknown>[] {
    const records: Record<string, unknown>[] = []
    for (let r = from; r < to; r++) records.push({})
    for (const { field, cell } of this.columns) {
      for (const piece of this.slice.columns.get(field.name) ?? []) {
        const data = piece.columnData
        const last = Math.min(to, piece.rowEnd)
        for (let r = Math.max(from, piece.rowStart); r < last; r++)
          (records[r - from] as Record<string, unknown>)[field.name] = cell(data[r - piece.rowStart])
      }
    }
    return records
  }
}

/**
 * The codecs, each taking an empty page as the empty page it is: a writer may leave a page's
 * compressed values section empty (a data page v2 of only NULLs), which no codec's stream format
 * allows (snappy reads a length header first and fails), and which DuckDB and Arrow read as empty.
 */
const emptyPageSafe: Compressors = Object.fromEntries(
  Object.entries(compressors).map(([codec, decompress]) => [
    codec,
    (input: Uint8Array, outputLength: number) =>
      input.length === 0 && outputLength === 0 ? new Uint8Array(0) : decompress(input, outputLength),
  ]),
)

/**
 * What a failure to decode rows `from` to `to` (from 0, `to` excluded) is: a value longer than a
 * string can be (Node's ERR_STRING_TOO_LONG: a valid file, such as the Parquet test corpus's 1 GiB
 * map key), a read that failed, or a file that is not valid Parquet.
 */
export function decodeError(file: string, from: number, to: number, error: unknown): Error {
  if (error instanceof FileReadError) return error
  const code = (error as { code?: unknown } | undefined)?.code
  if (code === 'ERR_STRING_TOO_LONG') return new ParquetValueTooLongError(file, from + 1, to)
  if (code === 'ERR_ENCODING_INVALID_ENCODED_DATA') return new ParquetTextInvalidError(file, from + 1, to)
  return new ParquetInvalidError(file, error)
}

/** The file as hyparquet reads it, through the handle opened (so a file renamed over it meanwhile is not mixed in). */
function fileBuffer(file: MatchedFile, handle: FileHandle, size: number): AsyncBuffer {
  return {
    byteLength: size,
    async slice(start: number, end = size): Promise<ArrayBuffer> {
      const bytes = new Uint8Array(new ArrayBuffer(Math.max(0, end - start)))
      try {
        for (let at = 0; at < bytes.length; ) {
          const { bytesRead } = await handle.read(bytes, at, bytes.length - at, start + at)
          if (bytesRead === 0) throw new Error(`the file ended at byte ${start + at}, before ${end}`)
          at += bytesRead
        }
      } catch (error) {
        throw new FileReadError(file.key, error)
      }
      return bytes.buffer
    },
  }
}

/** Whether the file starts and ends with the magic: a writer adds the end last. */
/**
 * `no-footer` for a file a writer may still be writing (empty, or the leading magic without the
 * trailing one), `not-parquet` for one that does not start as a Parquet file does.
 */
async function completenessOf(buffer: AsyncBuffer): Promise<'complete' | 'no-footer' | 'not-parquet'> {
  const head = Buffer.from(await buffer.slice(0, Math.min(MAGIC.length, buffer.byteLength)))
  if (!head.equals(MAGIC.subarray(0, head.length))) return 'not-parquet'
  if (buffer.byteLength < MAGIC.length + TAIL_BYTES) return 'no-footer'
  const tail = Buffer.from(await buffer.slice(buffer.byteLength - MAGIC.length))
  return tail.equals(MAGIC) ? 'complete' : 'no-footer'
}

/** A hash of the footer (the file's metadata as written), in the form the other formats' fingerprints take. */
async function footerFingerprint(buffer: AsyncBuffer, metadata: FileMetaData): Promise<string> {
  const footer = await buffer.slice(buffer.byteLength - TAIL_BYTES - metadata.metadata_length)
  return createHash('sha256').update(new Uint8Array(footer)).digest('base64url').slice(0, 22)
}
