/**
 * The overwrite-on-retry File sink: each (batch, namespace) becomes one file at a path derived
 * from the batch identity, written whole (temp name, fsync, rename, directory fsync). A retry
 * rewrites the same files, so the final set of files holds every row once.
 */
import path from 'node:path'
import type {
  ConnectorContext,
  NamespaceSchema,
  RecordFormat,
  Sink,
  SinkBatch,
  WriteOutcome,
} from '@skippr/connector-api'
import {
  BAD_RECORD,
  batchKey,
  cannotLand,
  countRecords,
  csvHeader,
  evolveSchema,
  hasCode,
  landed,
  ROW_COUNT_MISMATCH,
  RowCountMismatchError,
  retryLater,
  transcode,
} from '@skippr/connector-api'
import type { FileConfig } from './config.js'
import { ensureDir, removeOrphanTemps, writeWhole } from './durable.js'
import { FileNotWritableError, FileWriteError } from './errors.js'
import { batchFile, namespaceDir } from './names.js'

type Part = SinkBatch['parts'][number]

/** Errors that retrying cannot fix: the directory refuses us. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS'])
const NEWLINE = new Uint8Array([10])

export class FileSink implements Sink {
  readonly guarantee = 'overwrite-on-retry' as const
  readonly root: string
  private readonly format: RecordFormat

  constructor(config: FileConfig, context: Pick<ConnectorContext, 'configDir'>) {
    this.root = path.resolve(context.configDir, config.path)
    this.format = config.format
  }

  async prepare(schema: NamespaceSchema): Promise<void> {
    await ensureDir(this.root)
    const dir = namespaceDir(this.root, schema.namespace)
    await ensureDir(dir)
    await removeOrphanTemps(dir)
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    // Every file's bytes first: a record that cannot be converted, or a part whose records are not as
    // many as it declares, refuses the batch before any file is written.
    let files: { file: string; chunks: Uint8Array[] }[]
    try {
      files = [...groupByNamespace(batch.parts)].map(([namespace, parts]) => {
        const file = batchFile(this.root, namespace, batch.id, this.format)
        return { file, chunks: this.contents(parts, file, batch) }
      })
    } catch (error) {
      return hasCode(error, BAD_RECORD) || hasCode(error, ROW_COUNT_MISMATCH)
        ? cannotLand(error)
        : retryLater(error)
    }
    for (const { file, chunks } of files) {
      try {
        await ensureDir(path.dirname(file))
        await writeWhole(file, chunks)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? ''
        return NOT_WRITABLE.has(code)
          ? cannotLand(new FileNotWritableError(file, error))
          : retryLater(new FileWriteError(file, error))
      }
    }
    return landed(batch.parts.reduce((sum, part) => sum + part.rows, 0))
  }

  async close(): Promise<void> {}

  /**
   * One file's bytes: a CSV header (the parts' schemas merged) and each part's rows, each part
   * holding as many records as it declares.
   */
  private contents(parts: readonly Part[], file: string, batch: SinkBatch): Uint8Array[] {
    const first = parts[0] as Part
    const header = parts.reduce((merged, part) => evolveSchema(merged, part.schema), first.schema).fields
    const chunks = this.format === 'csv' ? [csvHeader(header)] : []
    for (const part of parts) {
      const body = transcode(part, this.format, header)
      const written = countRecords(body, this.format)
      if (written !== part.rows)
        throw new RowCountMismatchError({
          target: `file ${file}`,
          batch: batchKey(batch.id),
          expected: part.rows,
          loaded: written,
        })
      chunks.push(body)
      if (body.length > 0 && body[body.length - 1] !== 10) chunks.push(NEWLINE)
    }
    return chunks
  }
}

function groupByNamespace(parts: readonly Part[]): Map<string, Part[]> {
  const groups = new Map<string, Part[]>()
  for (const part of parts) {
    const group = groups.get(part.namespace)
    if (group) group.push(part)
    else groups.set(part.namespace, [part])
  }
  return groups
}
