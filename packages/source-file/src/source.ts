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
import { DEFAULT_CHUNK_BYTES, type FileConfig } from './config.js'
import { NoFilesError, NoRecordsError } from './errors.js'
import { DISCOVERY_ROWS, SAMPLE_BYTES } from './infer.js'
import { defaultNamespace, type MatchedFile, matchFiles, stamp } from './match.js'
import { type FilePosition, type FilePositions, parseOffset, toOffset } from './offset.js'
import { FileReader, type ReaderOptions } from './reader.js'
import { SchemaTracker } from './schema.js'

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
    const tracker = (await this.discoverSchema()).copy()
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
      for (let block = await reader.next(); block; block = await reader.next()) {
        const sampledSchema = sampled ? undefined : await tracker.observe(reader, block)
        sampled = true
        const schema = (await tracker.newKeys(reader, block)) ?? sampledSchema
        positions.set(file.key, block.position)
        yield this.chunk(this.reader.format, block, positions, schema)
        if (options.signal.aborted) return
      }
      if (reader.leftover > 0 && !options.follow) {
        this.context.logger.warn(
          'the last record is incomplete (no final newline, or an open quote): it is read once complete',
          {
            file: file.key,
            from_byte: reader.position.pos,
            bytes: reader.leftover,
          },
        )
      }
    } finally {
      await reader.close()
    }
  }

  /** A block of rows as a chunk: its offset holds every file's position so far. */
  private chunk(
    format: 'csv' | 'jsonl',
    block: { readonly rows: number; readonly body: Uint8Array },
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
      let schema = tracker.include(reader.fields)
      positions.set(file.key, reader.position)
      for (;;) {
        const block = await reader.next(this.reader.chunkBytes, tracker.schema.fields)
        if (!block) {
          this.parquetDone.set(file.key, `${reader.stamp}:${reader.position.pos}`)
          return
        }
        positions.set(file.key, block.position)
        yield this.chunk('csv', block, positions, schema)
        schema = undefined
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

  /** The configured schema, or one inferred from samples of the first files (cached once found). */
  private async discoverSchema(): Promise<SchemaTracker> {
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
          const block = await reader.next(Math.min(SAMPLE_BYTES, this.reader.chunkBytes))
          if (block) await tracker.observe(reader, block)
          rows += block?.rows ?? 0
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
