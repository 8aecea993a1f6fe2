import { SkipprError } from '@skippr/connector-api'

export const FILE_NOT_FOUND = 'SKIPPR_FILE_NOT_FOUND'
export const FILE_NO_RECORDS = 'SKIPPR_FILE_NO_RECORDS'
export const FILE_HEADER_INVALID = 'SKIPPR_FILE_HEADER_INVALID'
export const FILE_HEADER_MISMATCH = 'SKIPPR_FILE_HEADER_MISMATCH'
export const FILE_BAD_RECORD = 'SKIPPR_FILE_BAD_RECORD'
export const FILE_RECORD_TOO_LONG = 'SKIPPR_FILE_RECORD_TOO_LONG'
export const FILE_OFFSET_INVALID = 'SKIPPR_FILE_OFFSET_INVALID'
export const FILE_READ_FAILED = 'SKIPPR_FILE_READ_FAILED'
export const FILE_PARQUET_INVALID = 'SKIPPR_FILE_PARQUET_INVALID'
export const FILE_PARQUET_TYPE = 'SKIPPR_FILE_PARQUET_TYPE'
export const FILE_PARQUET_VALUE = 'SKIPPR_FILE_PARQUET_VALUE'

/** A place in a file, as an operator finds it in an editor: line number and byte offset. */
export interface FilePlace {
  readonly file: string
  readonly line: number
  readonly byte: number
}

const where = (at: FilePlace) => `${at.file}: line ${at.line} (byte ${at.byte})`

/** Discovery found no file to take a schema from. */
export class NoFilesError extends SkipprError {
  /** `schemaAllowed`: the format takes a configured schema (Parquet files declare their own). */
  constructor(pattern: string, schemaAllowed = true) {
    super(
      FILE_NOT_FOUND,
      `File source: no file matches ${pattern} (relative to the directory of skippr.yml): ` +
        (schemaAllowed
          ? 'check path, create the file, or set schema to start before the data exists'
          : 'check path, or create the file'),
    )
  }
}

/** Discovery found files but no complete record to infer types from. */
export class NoRecordsError extends SkipprError {
  constructor(pattern: string, schemaAllowed = true) {
    super(
      FILE_NO_RECORDS,
      schemaAllowed
        ? `File source: the files matching ${pattern} hold no complete record yet to infer a schema from: add data or set schema`
        : `File source: no file matching ${pattern} is a complete Parquet file yet: wait for its writer to finish, or check path`,
    )
  }
}

/** A CSV header row that cannot name columns (empty or repeated names). */
export class HeaderInvalidError extends SkipprError {
  constructor(file: string, problem: string) {
    super(
      FILE_HEADER_INVALID,
      `${file}: header row ${problem}: fix the header, or set header: false and schema`,
    )
  }
}

/** A CSV file whose header differs from the namespace's columns: its bytes cannot pass as they are. */
export class HeaderMismatchError extends SkipprError {
  constructor(file: string, header: readonly string[], expected: readonly string[]) {
    super(
      FILE_HEADER_MISMATCH,
      `${file}: header (${header.join(', ')}) differs from the columns of the namespace (${expected.join(', ')}): ` +
        'every file of one source needs the same columns in the same order; use one source per layout',
    )
  }
}

/**
 * A file that ends inside a quoted field: its last record cannot be read, and the quote would
 * swallow every record after it. Its code is also the `failureCode` of a record set aside
 * (refused.ts), whose `error` names the record's place and problem without this advice.
 */
export class BadRecordError extends SkipprError {
  constructor(at: FilePlace, problem: string) {
    super(FILE_BAD_RECORD, `${where(at)}: ${problem}: fix or remove the record, then sync again`)
  }
}

/** No record end within the limit: most likely an unbalanced quote swallowing the rest of the file. */
export class RecordTooLongError extends SkipprError {
  constructor(at: FilePlace, limit: number) {
    super(
      FILE_RECORD_TOO_LONG,
      `${where(at)}: no end of record within ${limit / (1024 * 1024)} MiB: look for an unbalanced quote there`,
    )
  }
}

/** The resume offset handed to `read` is not one this source produced. */
export class FileOffsetError extends SkipprError {
  constructor(offset: unknown) {
    super(
      FILE_OFFSET_INVALID,
      `File source: resume offset ${JSON.stringify(offset).slice(0, 200)} is not { files: { <path>: { pos, ino, fp } } }: ` +
        'it was written by another source type; reset the pipeline to start over',
    )
  }
}

/** The file system refused a read. */
export class FileReadError extends SkipprError {
  constructor(file: string, cause: unknown) {
    super(
      FILE_READ_FAILED,
      `${file}: cannot read: ${(cause as Error)?.message ?? String(cause)}: check that the file is readable`,
      { cause },
    )
  }
}

/** A file that ends as a Parquet file does (its footer is there) but cannot be decoded. */
export class ParquetInvalidError extends SkipprError {
  constructor(file: string, cause: unknown) {
    super(
      FILE_PARQUET_INVALID,
      `${file}: not a readable Parquet file: ${(cause as Error)?.message ?? String(cause)}: ` +
        'check that it was written completely, or move it out of the source path',
      { cause },
    )
  }
}

/** A Parquet column whose type no field type holds without loss. */
export class ParquetTypeError extends SkipprError {
  constructor(file: string, column: string, type: string) {
    super(
      FILE_PARQUET_TYPE,
      `${file}: column ${column} is ${type}, which the File source does not read: ` +
        'cast it to a supported type when writing the file (see the README of @skippr/source-file)',
    )
  }
}

/** V8's longest string (0x1fffffe8 characters on 64-bit platforms). */
const MAX_STRING_CHARS = 0x1fffffe8

/** A Parquet text or binary value longer than a JavaScript string can be: it cannot be passed on. */
/** A Parquet text value that is not UTF-8: decoded, it would land with U+FFFD in place of its bytes. */
export class ParquetTextInvalidError extends SkipprError {
  constructor(file: string, firstRow: number, lastRow: number) {
    super(
      FILE_PARQUET_VALUE,
      `${file}: rows ${firstRow} to ${lastRow}: a text value is not valid UTF-8, and passing it on would change it: ` +
        'fix the writer, or write the column as binary (no text type), which passes on as base64',
    )
  }
}

export class ParquetValueTooLongError extends SkipprError {
  constructor(file: string, firstRow: number, lastRow: number) {
    super(
      FILE_PARQUET_VALUE,
      `${file}: rows ${firstRow} to ${lastRow}: a value is longer than the ${MAX_STRING_CHARS.toLocaleString('en')} characters ` +
        'a string holds in Node.js, so the File source cannot pass it on: shorten or split the value, or move the file out of the source path',
    )
  }
}
