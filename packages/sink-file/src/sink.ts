/**
 * The overwrite-on-retry File sink: each (batch, namespace) becomes one file at a path derived
 * from the batch identity, written whole (temp name, fsync, rename, directory fsync). A retry
 * rewrites the same files, so the final set of files holds every row once.
 */
import path from 'node:path'
import type {
  ConnectorContext,
  NamespaceSchema,
  RefusedRow,
  Sink,
  SinkBatch,
  WriteOutcome,
} from '@skippr/connector-api'
import {
  BAD_RECORD,
  batchKey,
  cannotLand,
  hasCode,
  landed,
  ROW_COUNT_MISMATCH,
  refused,
  retryLater,
} from '@skippr/connector-api'
import type { FileEncoding, RecordsRefusedError } from '@skippr/file-formats'
import { encodeFile, fileExtension, RECORDS_REFUSED } from '@skippr/file-formats'
import type { FileConfig } from './config.js'
import { ensureDir, removeOrphanTemps, writeWhole } from './durable.js'
import { FileNotWritableError, FileWriteError } from './errors.js'
import { batchFile, namespaceDir } from './names.js'

type Part = SinkBatch['parts'][number]

/** Errors that retrying cannot fix: the directory refuses us. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS'])

export class FileSink implements Sink {
  readonly guarantee = 'overwrite-on-retry' as const
  readonly root: string
  private readonly encoding: FileEncoding

  constructor(config: FileConfig, context: Pick<ConnectorContext, 'configDir'>) {
    this.root = path.resolve(context.configDir, config.path)
    this.encoding = { format: config.format, compression: config.compression }
  }

  async prepare(schema: NamespaceSchema): Promise<void> {
    await ensureDir(this.root)
    const dir = namespaceDir(this.root, schema.namespace)
    await ensureDir(dir)
    await removeOrphanTemps(dir)
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    // Every file's bytes first: a record that cannot be converted, or a part whose records are not as
    // many as it declares, refuses the batch before any file is written. Rows refused for a value
    // are collected from every file, so that the one `refused` answer names them all.
    const files: { file: string; chunks: Uint8Array[] }[] = []
    const refusedRows: RefusedRow[] = []
    try {
      for (const [namespace, { parts, indexes }] of groupByNamespace(batch.parts)) {
        const file = batchFile(this.root, namespace, batch.id, fileExtension(this.encoding))
        const where = { target: `file ${file}`, batch: batchKey(batch.id) }
        try {
          files.push({ file, chunks: await encodeFile(parts, this.encoding, where) })
        } catch (error) {
          if (!hasCode(error, RECORDS_REFUSED)) throw error
          // The file's parts are some of the batch's: each refusal is named by its part in the batch.
          for (const row of (error as RecordsRefusedError).refusals)
            refusedRows.push({ ...row, part: indexes[row.part]! })
        }
      }
    } catch (error) {
      return hasCode(error, BAD_RECORD) || hasCode(error, ROW_COUNT_MISMATCH)
        ? cannotLand(error)
        : retryLater(error)
    }
    if (refusedRows.length > 0) return refused(refusedRows)
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
}

/** The parts of each namespace, in batch order, with each one's index in the batch. */
function groupByNamespace(parts: readonly Part[]): Map<string, { parts: Part[]; indexes: number[] }> {
  const groups = new Map<string, { parts: Part[]; indexes: number[] }>()
  parts.forEach((part, index) => {
    const group = groups.get(part.namespace)
    if (group) {
      group.parts.push(part)
      group.indexes.push(index)
    } else groups.set(part.namespace, { parts: [part], indexes: [index] })
  })
  return groups
}
