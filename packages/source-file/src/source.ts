import { stat } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  ConfigError,
  type ConnectorContext,
  type NamespaceSchema,
  type ReadOptions,
  type Source,
  type SourceChunk,
  type SourceOffset,
} from '@skippr/connector-api'
import type { Block } from './block.js'
import { DEFAULT_CHUNK_BYTES, DEFAULT_SETTLE_SECONDS, type FileConfig } from './config.js'
import { NoFilesError, NoRecordsError } from './errors.js'
import { defaultNamespace, type MatchedFile, matchFiles, openMatched, stamp } from './match.js'
import { type FilePosition, type FilePositions, parseOffset, toOffset } from './offset.js'
import { FileReader, type Passed, type ReaderOptions } from './reader.js'
import { DISCOVERY_ROWS, SAMPLE_BYTES, SchemaTracker } from './schema.js'

export const POLL_INTERVAL_MS = 1000

/**
 * The Parquet reader, loaded on first use: hyparquet and its codecs take about 90 ms to load, which a
 * CSV or JSON-lines run would otherwise pay at start-up.
 */
const parquetReader = () => import('./parquet.js').then((parquet) => parquet.ParquetReader)

/**
 * CSV, JSON-lines or Parquet files from a path or glob, as one namespace. CSV and JSON-lines records
 * move as the file's own bytes: each block is cut after its last complete record and passed on
 * without parsing values. Parquet rows are decoded and passed on as CSV (parquet.ts). The offset
 * holds, per file, the position after the last record passed on (a byte, or a Parquet row), so the
 * next run reads appended records and new files and never a record twice (see README, "Offsets").
 * A CSV or JSON-lines record that cannot be passed on is given in its chunk's `refused`, and the
 * records around it pass on (see README, "Records set aside").
 */
export class FileSource implements Source {
  private readonly namespace: string
  /**
   * Parquet files read to their last row by this instance: key → `stamp` of the file then. A row
   * position cannot be compared with a file's size, so this is what lets a listing skip them.
   */
  private readonly parquetDone = new Map<string, string>()
  private readonly header: boolean
  private readonly reader: ReaderOptions
  private readonly settleMs: number
  private discovered: SchemaTracker | undefined

  constructor(
    private readonly config: FileConfig,
    private readonly context: ConnectorContext,
    private readonly pollMs = POLL_INTERVAL_MS,
  ) {
    const namespace = config.namespace ?? defaultNamespace(config.path)
    if (namespace === undefined)
      throw new ConfigError(`File source: set namespace: none derives from ${config.path}`)
    this.namespace = namespace
    this.header = config.format === 'csv' && config.header !== false
    this.settleMs = (config.settle_seconds ?? DEFAULT_SETTLE_SECONDS) * 1000
    this.reader = {
      // FileReader reads the text formats only; Parquet files have a reader of their own.
      format: config.format === 'jsonl' ? 'jsonl' : 'csv',
      chunkBytes: config.chunk_bytes ?? DEFAULT_CHUNK_BYTES,
      logger: context.logger,
    }
  }

  async discover(): Promise<NamespaceSchema[]> {
    const { schema } = await this.discoverSchema()
    if (schema.fields.length > 0) return [schema]
    const files = await this.files()
    const schemaAllowed = this.config.format !== 'parquet'
    throw files.length === 0
      ? new NoFilesError(this.config.path, schemaAllowed)
      : new NoRecordsError(this.config.path, schemaAllowed)
  }

  async *read(from: SourceOffset | undefined, options: ReadOptions): AsyncIterable<SourceChunk> {
    const positions = parseOffset(from)
    const tracker = (await this.discoverSchema(options.signal)).copy()
    for (;;) {
      for (const { file, previous } of await this.plan(positions)) {
        yield* this.readFile(file, previous, positions, tracker, options)
        if (options.signal.aborted) return
      }
      if (!options.follow) return
      await sleep(this.pollMs, undefined, { signal: options.signal }).catch(() => undefined)
      if (options.signal.aborted) return
    }
  }

  /**
   * Every matched file opens for reading. No file is a failure only where discovery needs one: a
   * configured schema lets the pipeline start before its data exists.
   */
  async check(): Promise<void> {
    const files = await this.files()
    if (files.length === 0 && (this.config.format === 'parquet' || !this.config.schema))
      throw new NoFilesError(this.config.path, this.config.format !== 'parquet')
    for (const file of files) await openMatched(file, async () => undefined)
  }

  /**
   * The records of every matched file, as a read from the start passes them on or refuses them.
   * It reads them all: the files keep no count of their own.
   */
  async count(namespace: string): Promise<number> {
    if (namespace !== this.namespace) return 0
    let records = 0
    const options = { signal: new AbortController().signal, follow: false }
    for await (const chunk of this.read(undefined, options))
      records += chunk.rows + (chunk.refused?.length ?? 0)
    return records
  }

  async close(): Promise<void> {}

  private async *readFile(
    file: MatchedFile,
    previous: FilePosition | undefined,
    positions: FilePositions,
    tracker: SchemaTracker,
    options: ReadOptions,
  ): AsyncGenerator<SourceChunk> {
    if (this.config.format === 'parquet') {
      yield* this.readParquet(file, previous, positions, tracker, options)
      return
    }
    const reader = await FileReader.open(file, previous, this.reader)
    if (!reader) return
    try {
      const ready = await tracker.prepare(reader, this.header)
      // Where opening left the file (resumed, restarted, past the header) holds even if no
      // record follows: a later chunk's offset must not send the next run back to an old place.
      positions.set(file.key, reader.position)
      if (!ready) return
      let sampled = false
      const blocks = async () => (await reader.next()) ?? (await this.tail(reader, options))
      for (let block = await blocks(); block; block = await blocks()) {
        if (!sampled) tracker.observe(block)
        sampled = true
        tracker.widenMisfits(reader, block)
        tracker.newKeys(block)
        positions.set(file.key, block.position)
        const passed = await reader.passed(block, this.namespace)
        yield this.chunk(this.reader.format, passed, positions, tracker.unsent())
        if (options.signal.aborted) return
      }
      if (reader.leftover > 0 && !options.follow && !options.signal.aborted) {
        this.context.logger.warn(
          'the file grew while its last record was awaited: the rest is read by the next run',
          {
            file: file.key,
            from_byte: reader.position.pos,
          },
        )
      }
    } finally {
      await reader.close()
    }
  }

  /**
   * The record after the last newline, once the file's writer is done with it: the file has kept
   * its size and not been modified for the settle time. Without `follow` it waits that long.
   */
  private async tail(reader: FileReader, options: ReadOptions): Promise<Block | undefined> {
    while (reader.leftover > 0 && !options.signal.aborted) {
      const { size, mtimeMs } = await reader.stat()
      // Grown since: what was appended is read by a later pass (follow) or run.
      if (size !== reader.position.pos + reader.leftover) return undefined
      const idle = Date.now() - mtimeMs
      if (idle >= this.settleMs) return reader.last()
      if (options.follow) return undefined
      this.context.logger.debug('the last record has no newline: waiting for the file to stop changing', {
        file: reader.file.key,
        from_byte: reader.position.pos,
        wait_ms: this.settleMs - idle,
      })
      await sleep(this.settleMs - idle, undefined, { signal: options.signal }).catch(() => undefined)
    }
    return undefined
  }

  /** A block of rows as a chunk: its offset holds every file's position so far. */
  private chunk(
    format: 'csv' | 'jsonl',
    block: Passed,
    positions: FilePositions,
    schema: NamespaceSchema | undefined,
  ): SourceChunk {
    return {
      namespace: this.namespace,
      format,
      rows: block.rows,
      body: block.body,
      offset: toOffset(positions),
      ...(schema ? { schema } : {}),
      ...(block.refused ? { refused: block.refused } : {}),
    }
  }

  private async *readParquet(
    file: MatchedFile,
    previous: FilePosition | undefined,
    positions: FilePositions,
    tracker: SchemaTracker,
    options: ReadOptions,
  ): AsyncGenerator<SourceChunk> {
    const reader = await (await parquetReader()).open(file, previous, this.context.logger)
    if (!reader) return
    try {
      tracker.include(reader.fields)
      positions.set(file.key, reader.position)
      for (;;) {
        const block = await reader.next(this.reader.chunkBytes, tracker.schema.fields)
        if (!block) {
          this.parquetDone.set(file.key, `${reader.stamp}:${reader.position.pos}`)
          return
        }
        positions.set(file.key, block.position)
        yield this.chunk('csv', block, positions, tracker.unsent())
        if (options.signal.aborted) return
      }
    } finally {
      await reader.close()
    }
  }

  /**
   * The files to read now, each with the position to resume from. Files gone from the listing
   * leave the offset. A position whose file left its name, or has another inode under it, may
   * have moved: a file under a new name with that inode (log rotation) continues from it, once
   * its fingerprint confirms it. Unchanged files are skipped without being opened.
   */
  private async plan(positions: FilePositions): Promise<{ file: MatchedFile; previous?: FilePosition }[]> {
    const listed = await Promise.all(
      (await this.files()).map(async (file) => {
        const found = await stat(file.path).catch(() => undefined)
        return found && { file, ino: String(found.ino), size: found.size, stamp: stamp(found) }
      }),
    )
    const present = listed.filter((entry) => entry !== undefined)
    const inodeAt = new Map(present.map(({ file, ino }) => [file.key, ino]))
    const moved = new Map<string, FilePosition>()
    for (const [key, position] of positions) {
      if (inodeAt.get(key) !== position.ino) moved.set(position.ino, position)
      if (!inodeAt.has(key)) positions.delete(key)
    }
    const plan: { file: MatchedFile; previous?: FilePosition }[] = []
    for (const { file, ino, size, stamp } of present) {
      const known = positions.get(file.key)
      if (this.config.format === 'parquet') {
        if (known?.ino === ino && this.parquetDone.get(file.key) === `${stamp}:${known.pos}`) continue
      } else if (known?.ino === ino && known.pos === size) continue
      const previous = known?.ino === ino ? known : (moved.get(ino) ?? known)
      plan.push(previous ? { file, previous } : { file })
    }
    return plan
  }

  private files(): Promise<MatchedFile[]> {
    return matchFiles(this.config.path, this.context.configDir)
  }

  /**
   * The configured schema, or one inferred from samples of the first files (cached once found).
   * `signal` ends the wait for a file's last record to settle (see `tail`).
   */
  private async discoverSchema(signal = new AbortController().signal): Promise<SchemaTracker> {
    if (this.discovered) return this.discovered
    const tracker = new SchemaTracker(this.namespace, this.config.format, this.config.schema)
    if (this.config.format === 'parquet') {
      for (const file of await this.files()) {
        const reader = await (await parquetReader()).open(file, undefined, this.context.logger)
        if (!reader) continue
        await reader.close()
        tracker.include(reader.fields)
        break
      }
    } else if (!this.config.schema) {
      let rows = 0
      for (const file of await this.files()) {
        const reader = await FileReader.open(file, undefined, this.reader)
        if (!reader) continue
        try {
          if (!(await tracker.prepare(reader, this.header))) continue
          // A file whose rest fits in the sample is sampled to its settled last record.
          const sampleBytes = Math.min(SAMPLE_BYTES, this.reader.chunkBytes)
          const next = async (bytes: number) =>
            (await reader.next(bytes)) ?? (await this.tail(reader, { signal, follow: false }))
          for (let sampled = 0, block = await next(sampleBytes); block; ) {
            tracker.observe(block)
            rows += block.rows
            sampled += block.records.length
            const rest = (await reader.stat()).size - reader.position.pos
            block = rest > 0 && rest <= sampleBytes - sampled ? await next(rest) : undefined
          }
        } finally {
          await reader.close()
        }
        if (rows >= DISCOVERY_ROWS) break
      }
    }
    if (tracker.schema.fields.length > 0) this.discovered = tracker
    return tracker
  }
}
