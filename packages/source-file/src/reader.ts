import type { FileHandle } from 'node:fs/promises'
import type { Logger, RefusedRecord } from '@skippr/connector-api'
import { Block } from './block.js'
import { LF } from './bytes.js'
import { type CsvField, parseCsv } from './csv.js'
import { BadRecordError, type FilePlace, FileReadError, RecordTooLongError } from './errors.js'
import { Fingerprint } from './fingerprint.js'
import { type MatchedFile, openMatched } from './match.js'
import type { FilePosition } from './offset.js'
import { Refusals } from './refused.js'
import { type CsvWatch, firstRecordEnd, NO_WATCH, type Scan, scanCsv, scanJsonl } from './scan.js'
import { textFaults } from './text.js'

/** A record longer than this is taken for a runaway quoted field rather than waited for. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024
/** Bytes read at first when looking for one record alone (a header row). */
const FIRST_READ = 64 * 1024
const UTF8_BOM = [0xef, 0xbb, 0xbf]
const NEWLINE = new Uint8Array([10])

export interface ReaderOptions {
  readonly format: 'csv' | 'jsonl'
  readonly chunkBytes: number
  readonly logger: Logger
}

/** What a block passes on: its body, its rows, and the records it set aside. */
export interface Passed {
  readonly body: Uint8Array
  readonly rows: number
  readonly refused?: readonly RefusedRecord[]
}

/**
 * One file, read from a position. Opening checks that the file still begins with the bytes read
 * before (`Fingerprint`); when it does not, the file was replaced or truncated, and it is read
 * from its start as a new file. Blocks end at the last complete record: an incomplete last record
 * (no newline yet, an open quote) stays in the file for a later read, unless the caller knows the
 * file is done and asks for it (`last`). A record that cannot be passed on is set aside in its
 * block (`Block.refused`), which covers it: the position moves past it.
 */
export class FileReader {
  /** CSV fields per record: set by the caller before reading blocks of a CSV file. */
  columns = 0
  /** CSV: the columns whose values are watched for a type a sink could alter them in (`scanCsv`). */
  watch: CsvWatch = NO_WATCH
  /** Bytes after the last complete record when `next` found no more: an incomplete record. */
  leftover = 0
  private fingerprint = Fingerprint.empty()
  private pos = 0
  /** The last place counted: records are placed in file order, so each count goes on from it. */
  private placed: FilePlace | undefined

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
      const { size } = await this.stat()
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
    if (startsWithBom(start)) this.advance(start)
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
      const bom = from === 0 && startsWithBom(bytes) ? UTF8_BOM.length : 0
      const found = firstRecordEnd(bytes.subarray(bom))
      if (found !== -1) {
        const end = bom + found
        const text = new TextDecoder().decode(bytes.subarray(0, end)) // drops a byte-order mark
        if (which === 'header' && this.pos < end) this.advance(bytes.subarray(this.pos, end))
        return parseCsv(text, 1)[0]?.fields ?? []
      }
      if (bytes.length < want) return undefined
      if (want >= MAX_RECORD_BYTES) throw new RecordTooLongError(await this.place(from), MAX_RECORD_BYTES)
    }
  }

  /**
   * The next block of complete records, of about `size` bytes; undefined when there is none yet.
   * A block may hold refused records only (no rows): it is returned, so that they are set aside.
   */
  async next(size = this.options.chunkBytes): Promise<Block | undefined> {
    let want = size
    for (;;) {
      const start = this.pos
      const bytes = await this.readAt(start, want)
      const scan = this.scan(bytes)
      if (scan.end > 0) {
        const records = bytes.subarray(0, scan.end)
        this.advance(records)
        const block = this.block(records, start, scan)
        if (block.rows === 0 && block.refused.size === 0) continue // only blank lines: skip them
        return block
      }
      if (bytes.length < want) {
        this.leftover = bytes.length
        return undefined
      }
      if (want >= MAX_RECORD_BYTES) throw new RecordTooLongError(await this.place(this.pos), MAX_RECORD_BYTES)
      want = Math.min(want * 2, MAX_RECORD_BYTES) // a record longer than a block
    }
  }

  /**
   * The `leftover` bytes at the end of the file as its last block, for a file its writer is done
   * with: a last record without its newline is whole, and one that ends inside a quoted field fails
   * the file at its line (the quote would swallow every record after it). Undefined when there is
   * no leftover, or it holds no record.
   */
  async last(): Promise<Block | undefined> {
    if (this.leftover === 0) return undefined
    const start = this.pos
    const bytes = await this.readAt(start, this.leftover)
    // The newline the writer left out: the body ends in one, the position stays at the file's end.
    const records = Buffer.concat([bytes, NEWLINE])
    const scan = this.scan(records)
    if (scan.end !== records.length) {
      const at = await this.place(start + scan.end)
      throw new BadRecordError(
        at,
        'the file ends inside a quoted field opened in this record: close the quote',
      )
    }
    this.advance(bytes)
    this.leftover = 0
    const block = this.block(records, start, scan)
    return block.rows === 0 && block.refused.size === 0 ? undefined : block
  }

  /** What `block` passes on, once every refusal of its records is known (the schema tracker's too). */
  async passed(block: Block, namespace: string): Promise<Passed> {
    const passed = { body: block.body(), rows: block.rows }
    if (block.refused.size === 0) return passed
    const { line } = await this.place(block.start)
    const { refused, lineAfter } = block.refused.records(
      namespace,
      this.file.key,
      block.records,
      block.start,
      line,
    )
    // Placing the next block's refused records then reads nothing again when it follows this one.
    // Not after a last block whose newline was added (`last`): that newline is not in the file.
    if (block.start + block.records.length === block.position.pos)
      this.placed = { file: this.file.key, line: lineAfter, byte: block.position.pos }
    return { ...passed, refused }
  }

  /** The file's size and modification time now. */
  async stat(): Promise<{ size: number; mtimeMs: number }> {
    try {
      return await this.handle.stat()
    } catch (error) {
      throw new FileReadError(this.file.key, error)
    }
  }

  async close(): Promise<void> {
    await this.handle.close()
  }

  /**
   * Scans `bytes` from a record's start. Text no sink holds is searched for in the whole lines
   * (a record ends at a newline, and a character never spans one), and the scan refuses the
   * records that hold it, as it refuses those it cannot read.
   */
  private scan(bytes: Uint8Array): Scan {
    const { format } = this.options
    const faults = textFaults(bytes.subarray(0, bytes.lastIndexOf(LF) + 1), format)
    return format === 'jsonl' ? scanJsonl(bytes, faults) : scanCsv(bytes, this.columns, this.watch, faults)
  }

  /** The block of the records scanned from byte `start`, with the records the scan refused; the position is past them already. */
  private block(records: Uint8Array, start: number, scan: Scan): Block {
    const refused = new Refusals()
    for (const bad of scan.refused ?? []) refused.add(bad.start, bad.end, bad.problem, false)
    return new Block(records, start, this.position, scan, refused)
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

  /**
   * Line and byte of a position for an error message or a refused record: counts newlines, on
   * those paths only, from the last place counted when it is before `byte`.
   */
  async place(byte: number): Promise<FilePlace> {
    const from = this.placed && this.placed.byte <= byte ? this.placed : { byte: 0, line: 1 }
    let line = from.line
    let at = from.byte
    while (at < byte) {
      const bytes = await this.readAt(at, Math.min(FIRST_READ, byte - at))
      if (bytes.length === 0) break
      for (let i = bytes.indexOf(LF); i !== -1; i = bytes.indexOf(LF, i + 1)) line++
      at += bytes.length
    }
    const place = { file: this.file.key, line, byte }
    if (at === byte) this.placed = place
    return place
  }
}

function startsWithBom(bytes: Uint8Array): boolean {
  return bytes.length >= UTF8_BOM.length && UTF8_BOM.every((b, i) => bytes[i] === b)
}
