import type { FileHandle } from 'node:fs/promises'
import type { Logger } from '@skippr/connector-api'
import { type CsvField, parseCsv } from './csv.js'
import { BadRecordError, type FilePlace, FileReadError, RecordTooLongError } from './errors.js'
import { Fingerprint } from './fingerprint.js'
import { type MatchedFile, openMatched } from './match.js'
import type { FilePosition } from './offset.js'
import { firstRecordEnd, type Scan, scanCsv, scanJsonl, withoutBlanks } from './scan.js'

/** A record longer than this is taken for a runaway quoted field rather than waited for. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024
/** Bytes read at first when looking for one record alone (a header row). */
const FIRST_READ = 64 * 1024
const UTF8_BOM = [0xef, 0xbb, 0xbf]

export interface ReaderOptions {
  readonly format: 'csv' | 'jsonl'
  readonly chunkBytes: number
  readonly logger: Logger
}

/** Complete records read from one file, and the position after them. */
export interface Block {
  /** The records as they are in the file, from byte `start`. */
  readonly records: Uint8Array
  readonly start: number
  /** The records without blank lines: what is passed on. */
  readonly body: Uint8Array
  readonly rows: number
  readonly position: FilePosition
}

/**
 * One file, read from a position. Opening checks that the file still begins with the bytes read
 * before (`Fingerprint`); when it does not, the file was replaced or truncated, and it is read
 * from its start as a new file. Blocks end at the last complete record: an incomplete last record
 * (no newline yet, an open quote) stays in the file for a later read.
 */
export class FileReader {
  /** CSV fields per record: set by the caller before reading blocks of a CSV file. */
  columns = 0
  /** Bytes after the last complete record when `next` found no more: an incomplete record. */
  leftover = 0
  private fingerprint = Fingerprint.empty()
  private pos = 0

  private constructor(
    readonly file: MatchedFile,
    private readonly handle: FileHandle,
    private readonly ino: string,
    private readonly options: ReaderOptions,
  ) {}

  /** Opens `file` to read after `previous`; undefined when it vanished since it was listed. */
  static async open(
    file: MatchedFile,
    previous: FilePosition | undefined,
    options: ReaderOptions,
  ): Promise<FileReader | undefined> {
    return openMatched(file, async (handle, stats) => {
      const reader = new FileReader(file, handle, String(stats.ino), options)
      await reader.resume(previous)
      return reader
    })
  }

  get position(): FilePosition {
    return { pos: this.pos, ino: this.ino, fp: this.fingerprint.digest() }
  }

  private async resume(previous: FilePosition | undefined): Promise<void> {
    if (previous && previous.pos > 0) {
      const { size } = await this.handle.stat().catch((error: unknown) => {
        throw new FileReadError(this.file.key, error)
      })
      const fingerprint = size >= previous.pos ? await Fingerprint.of(this.handle, previous.pos) : undefined
      if (fingerprint?.digest() === previous.fp) {
        this.fingerprint = fingerprint
        this.pos = previous.pos
        return
      }
      this.options.logger.warn(
        'file was replaced or truncated since it was read: reading it from the start',
        {
          file: this.file.key,
          previous_pos: previous.pos,
          size,
        },
      )
    }
    const start = await this.readAt(0, UTF8_BOM.length)
    if (start.length === UTF8_BOM.length && UTF8_BOM.every((b, i) => start[i] === b)) this.advance(start)
  }

  /**
   * The fields of the CSV record at the read position (`next`) or of the file's first record
   * (`header`, without the byte-order mark); undefined while it is incomplete. Reading the header
   * at the start of the file moves past it.
   */
  async record(which: 'header' | 'next'): Promise<CsvField[] | undefined> {
    const from = which === 'header' ? 0 : this.pos
    for (let want = FIRST_READ; ; want *= 2) {
      const bytes = await this.readAt(from, want)
      const end = firstRecordEnd(bytes)
      if (end !== -1) {
        const text = new TextDecoder().decode(bytes.subarray(0, end)) // drops a byte-order mark
        if (which === 'header' && this.pos < end) this.advance(bytes.subarray(this.pos, end))
        return parseCsv(text, 1)[0]?.fields ?? []
      }
      if (bytes.length < want) return undefined
      if (want >= MAX_RECORD_BYTES) throw new RecordTooLongError(await this.place(from), MAX_RECORD_BYTES)
    }
  }

  /** The next block of complete records, of about `size` bytes; undefined when there is none yet. */
  async next(size = this.options.chunkBytes): Promise<Block | undefined> {
    let want = size
    for (;;) {
      const start = this.pos
      const bytes = await this.readAt(start, want)
      const scan = this.scan(bytes)
      if (scan.end > 0) {
        const records = bytes.subarray(0, scan.end)
        this.advance(records)
        if (scan.rows === 0) continue // only blank lines: skip them
        const body = withoutBlanks(records, scan.end, scan.blanks)
        return { records, start, body, rows: scan.rows, position: this.position }
      }
      if (scan.bad) throw new BadRecordError(await this.place(this.pos), scan.bad)
      if (bytes.length < want) {
        this.leftover = bytes.length
        return undefined
      }
      if (want >= MAX_RECORD_BYTES) throw new RecordTooLongError(await this.place(this.pos), MAX_RECORD_BYTES)
      want = Math.min(want * 2, MAX_RECORD_BYTES) // a record longer than a block
    }
  }

  async close(): Promise<void> {
    await this.handle.close()
  }

  private scan(bytes: Uint8Array): Scan {
    return this.options.format === 'jsonl' ? scanJsonl(bytes) : scanCsv(bytes, this.columns)
  }

  private advance(bytes: Uint8Array): void {
    this.fingerprint.advance(bytes)
    this.pos += bytes.length
  }

  private async readAt(position: number, length: number): Promise<Uint8Array> {
    const buffer = Buffer.allocUnsafe(length)
    try {
      const { bytesRead } = await this.handle.read(buffer, 0, length, position)
      return buffer.subarray(0, bytesRead)
    } catch (error) {
      throw new FileReadError(this.file.key, error)
    }
  }

  /** Line and byte of a position for an error message: counts newlines, on the error path only. */
  async place(byte: number): Promise<FilePlace> {
    let line = 1
    for (let at = 0; at < byte; at += FIRST_READ) {
      const bytes = await this.readAt(at, Math.min(FIRST_READ, byte - at))
      if (bytes.length === 0) break
      for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) line++
    }
    return { file: this.file.key, line, byte }
  }
}
