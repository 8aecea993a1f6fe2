/**
 * Parquet encoding of one namespace's batch parts: every value lands exactly as the part's text
 * means it, or its row is refused. A part's text is read once, straight into one array per column
 * (part-rows.ts), and the arrays are written out as a row group every ROW_GROUP_ROWS rows, so
 * besides the parts and the file's bytes memory holds one row group's values. Once a row is
 * refused the file will not be made: the scan goes on only to find every other refused row, and
 * memory holds their refusals alone.
 */
import { type Field, type FieldType, RowCountMismatchError } from '@skippr/connector-api'
import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import { gzipBytes, zstdBytes } from './compression.js'
import type { Compression } from './encoding.js'
import type { Value } from './field-values.js'
import type { FilePart, RowSink } from './part-reader.js'
import { decodePart } from './part-rows.js'
import { type RecordRefusal, RecordsRefusedError } from './records-refused.js'

/**
 * One Parquet file holding every row of `parts` (one namespace), columns in `header` order, typed
 * from the header's field types, its pages compressed as `compression` says (for `zstd`, after
 * `await zstdReady()` from compression.ts). Throws RecordsRefusedError naming every row with a
 * value that cannot be held exactly (its part, its row, the field and the value), after scanning
 * all of them; BadRecordError (connector-api) for a record that is not well-formed or a body that
 * is not UTF-8; RowCountMismatchError when the rows decoded from a part differ from its declared
 * `rows` (`target` and `batch` name the file and the batch in the messages).
 */
export function parquetFile(
  parts: readonly FilePart[],
  header: readonly Field[],
  target: string,
  batch: string,
  compression: Compression,
): Uint8Array[] {
  const file = new ParquetRows(header, compression)
  parts.forEach((part, index) => {
    const rows = decodePart(part, index, header, file)
    if (rows !== part.rows)
      throw new RowCountMismatchError({ target, batch, expected: part.rows, loaded: rows })
  })
  if (file.refusals.length > 0) throw new RecordsRefusedError({ target, batch }, file.refusals)
  return file.finish()
}

/** Rows per row group: large enough to compress well, small enough to bound the column arrays. */
const ROW_GROUP_ROWS = 100_000
/** Fixed, so a retry writes the same bytes. */
const CREATED_BY = 'skippr file-formats'

type WriterOptions = ConstructorParameters<typeof ParquetWriter>[0]
type SchemaElement = WriterOptions['schema'][number]

/**
 * The Parquet codec of each compression setting. Parquet compresses inside the file, page by page,
 * where every reader looks, so the file's bytes are never compressed again. `none` means "no
 * whole-file compression" and is SNAPPY, not UNCOMPRESSED: Parquet readers expect compressed
 * pages, and SNAPPY is the default of hyparquet-writer, DuckDB, Spark and pyarrow alike.
 */
const CODECS: Record<Compression, Pick<WriterOptions, 'codec' | 'compressors'>> = {
  none: { codec: 'SNAPPY' },
  gzip: { codec: 'GZIP', compressors: { GZIP: gzipBytes } },
  zstd: { codec: 'ZSTD', compressors: { ZSTD: zstdBytes } },
}

/** The Parquet type of each field type. Every column is OPTIONAL: a part may lack a header field. */
const ELEMENTS: Record<FieldType, Omit<SchemaElement, 'name'>> = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
  int: { type: 'INT32' },
  long: { type: 'INT64' },
  double: { type: 'DOUBLE' },
  boolean: { type: 'BOOLEAN' },
  date: { type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } },
  timestamp: {
    type: 'INT64',
    converted_type: 'TIMESTAMP_MICROS',
    logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
  },
  // The converted type JSON is added when the row groups are written (ParquetRows.finish).
  json: { type: 'BYTE_ARRAY', logical_type: { type: 'JSON' } },
}

/** The file's bytes, taken out after every row group so no buffer grows to the whole file. */
class ChunkWriter extends ByteWriter {
  readonly chunks: Uint8Array[] = []

  /** ParquetWriter calls this after each row group. */
  flush(): void {
    if (this.index === 0) return
    this.chunks.push(new Uint8Array(this.buffer.slice(0, this.index)))
    this.index = 0
  }

  override finish(): void {
    this.flush()
  }
}

/** Rows are set a cell at a time into `row`, then `endRow` moves them into the column arrays. */
class ParquetRows implements RowSink {
  readonly row: Value[]
  /** The rows refused, in order. Once there is one, no more rows are kept: the file will not be made. */
  readonly refusals: RecordRefusal[] = []
  /** Whether the row being decoded is refused already. */
  private rowRefused = false
  private readonly header: readonly Field[]
  private readonly elements: SchemaElement[]
  private readonly writer = new ChunkWriter()
  private readonly parquet: ParquetWriter
  private columns: Value[][]
  /** Rows in `columns`, not yet written. */
  private rows = 0

  constructor(header: readonly Field[], compression: Compression) {
    this.header = header
    this.row = header.map(() => null)
    this.columns = header.map(() => [])
    this.elements = header.map((f) => ({ name: f.name, repetition_type: 'OPTIONAL', ...ELEMENTS[f.type] }))
    this.parquet = new ParquetWriter({
      writer: this.writer,
      schema: [{ name: 'root', num_children: header.length }, ...this.elements],
      createdBy: CREATED_BY,
      ...CODECS[compression],
    })
  }

  endRow(): void {
    const row = this.row
    if (this.refusals.length > 0) {
      row.fill(null)
      this.rowRefused = false
      return
    }
    for (let c = 0; c < row.length; c++) {
      this.columns[c]!.push(row[c]!)
      row[c] = null
    }
    if (++this.rows === ROW_GROUP_ROWS) this.writeRowGroup()
  }

  refuseRow(refusal: RecordRefusal): void {
    if (this.rowRefused) return
    this.rowRefused = true
    // The first refusal: the rows and row groups so far are never written, so they are let go.
    if (this.refusals.length === 0) {
      this.columns = this.header.map(() => [])
      this.rows = 0
      this.writer.chunks.length = 0
    }
    this.refusals.push(refusal)
  }

  /** Writes the last row group and the footer; returns the file's bytes. */
  finish(): Uint8Array[] {
    if (this.rows > 0) this.writeRowGroup()
    // hyparquet-writer JSON.stringify()s every value of a column whose converted type is JSON, which
    // would quote our JSON text; only readers look at the converted type, in the footer written now.
    for (const element of this.elements)
      if (element.logical_type?.type === 'JSON') element.converted_type = 'JSON'
    this.parquet.finish()
    return this.writer.chunks
  }

  private writeRowGroup(): void {
    const columnData = this.header.map((f, c) => ({
      name: f.name,
      data: this.columns[c]!,
      // Bounds of JSON text order nothing a reader filters on.
      statistics: f.type !== 'json',
    }))
    this.parquet.write({ columnData, rowGroupSize: ROW_GROUP_ROWS })
    this.columns = this.header.map(() => [])
    this.rows = 0
  }
}
