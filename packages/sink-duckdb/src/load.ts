/**
 * The bulk path: each part's body is written to a file once and DuckDB's own parallel readers
 * (read_csv / read_json) parse it straight into the table, with the column types given
 * explicitly, so nothing is sniffed and no value passes through JavaScript. Parts of several
 * batches for one table load in one statement over their files.
 */
import { mkdtemp, open, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { BatchPart, NamespaceSchema, RecordFormat } from '@skippr/connector-api'
import { isProcessAlive, makeDirectory } from '@skippr/connector-api'
import { loadFileChunks, readRecords } from './read.js'
import { ident } from './sql.js'

export type Part = BatchPart & { readonly schema: NamespaceSchema }

/**
 * read_csv's read unit (its default is 32 MiB, more than a whole batch). Smaller units let DuckDB's
 * threads share the files of a grouped load more evenly: two 10 MB batches load in about 85% of the
 * time at 2 MiB.
 */
const CSV_BUFFER_BYTES = 2 * 1024 * 1024

const DIR_PREFIX = 'sink-duckdb-'

/** A batch's parts written to load files. */
export interface Spooled {
  readonly paths: ReadonlyMap<BatchPart, string>
  release(): Promise<void>
}

/** The sink's directory of load files, one per open sink, removed on close. */
export class LoadFiles {
  private counter = 0
  private constructor(readonly dir: string) {}

  static async create(parent: string): Promise<LoadFiles> {
    await makeDirectory(parent)
    await removeOrphans(parent)
    return new LoadFiles(await mkdtemp(path.join(parent, `${DIR_PREFIX}${process.pid}-`)))
  }

  /**
   * Writes each part's body to a fresh file of its own (none for an empty body), so DuckDB can read
   * them; `release` deletes them. A file left by a failed write is deleted before it throws.
   */
  async spool(parts: readonly BatchPart[]): Promise<Spooled> {
    const paths = new Map<BatchPart, string>()
    const spooled: Spooled = { paths, release: () => removeFiles([...paths.values()]) }
    try {
      await Promise.all(
        parts
          .filter((part) => part.body.length > 0)
          .map((part) => {
            const file = path.join(this.dir, `${++this.counter}.${part.format}`)
            paths.set(part, file)
            return writeWhole(file, loadFileChunks(part.format, part.body))
          }),
      )
    } catch (error) {
      await spooled.release()
      throw error
    }
    return spooled
  }

  /** Writes each of `bodies` as it is to a fresh file of its own; `release` deletes them. */
  async write(
    format: RecordFormat,
    bodies: readonly Uint8Array[],
  ): Promise<{ paths: string[]; release(): Promise<void> }> {
    const paths = bodies.map(() => path.join(this.dir, `${++this.counter}.${format}`))
    const release = () => removeFiles(paths)
    try {
      await Promise.all(bodies.map((body, i) => writeWhole(paths[i]!, [body])))
    } catch (error) {
      await release()
      throw error
    }
    return { paths, release }
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true })
  }
}

/**
 * One write call for each of `chunks`, in order (fs.writeFile goes in 512 KiB steps, each waiting
 * its turn on a busy event loop).
 */
async function writeWhole(file: string, chunks: readonly Uint8Array[]): Promise<void> {
  const handle = await open(file, 'w')
  try {
    for (const chunk of chunks)
      for (let at = 0; at < chunk.length; ) at += (await handle.write(chunk, at)).bytesWritten
  } finally {
    await handle.close()
  }
}

async function removeFiles(files: readonly string[]): Promise<void> {
  await Promise.all(files.map((file) => rm(file, { force: true })))
}

/** Load directories left behind by processes that died (SIGKILL) in the middle of a load. */
async function removeOrphans(parent: string): Promise<void> {
  for (const name of await readdir(parent)) {
    const pid = Number(name.slice(DIR_PREFIX.length).split('-')[0])
    if (!name.startsWith(DIR_PREFIX) || !Number.isInteger(pid) || isProcessAlive(pid)) continue
    await rm(path.join(parent, name), { recursive: true, force: true })
  }
}

function longestBody(parts: readonly Part[]): number {
  return Math.max(CSV_BUFFER_BYTES, ...parts.map((part) => part.body.length))
}

/**
 * read_csv refused a record longer than its buffer (or its parallel reader met one): not a fault of
 * the data, the load is tried again with a buffer that holds it.
 */
export function recordOutgrewBuffer(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause)
    if (/Maximum line size of \d+ bytes exceeded|does not support a full read/.test(e.message)) return true
  return false
}

/** Parts that load in one statement: one table, one format, one schema version. */
export function byTable(parts: readonly Part[]): Part[][] {
  const groups = new Map<string, Part[]>()
  for (const part of parts) {
    const key = JSON.stringify([part.namespace, part.format, part.schema.fields])
    const group = groups.get(key)
    if (group) group.push(part)
    else groups.set(key, [part])
  }
  return [...groups.values()]
}

/**
 * Appends the rows of `parts` (one format, one schema) to `table` inside the caller's transaction,
 * in one statement over their spooled files, sent with the statement `before` (if any) in one round
 * trip; returns the rows inserted.
 */
export async function loadParts(
  conn: DuckDBConnection,
  table: string,
  parts: readonly Part[],
  paths: ReadonlyMap<BatchPart, string>,
  before?: string,
  longRecords = false,
): Promise<number> {
  const [first] = parts
  const files = parts.flatMap((part) => paths.get(part) ?? [])
  if (first === undefined || files.length === 0) {
    if (before) await conn.run(before)
    return 0
  }
  const insert = insertSql(table, first, files, longRecords ? longestBody(parts) : undefined)
  const result = await conn.run(before ? `${before}; ${insert}` : insert)
  return result.rowsChanged
}

/**
 * `recordBytes`: read_csv's buffer must hold a whole record, and one of the parts' records may be
 * longer than CSV_BUFFER_BYTES (a 50 MB value); then the buffer is the longest body, which holds
 * any record of it.
 */
function insertSql(table: string, part: Part, paths: string[], recordBytes?: number): string {
  const fields = part.schema.fields
  const targets = fields.map((f) => ident(f.name)).join(', ')
  const buffer =
    recordBytes === undefined
      ? `buffer_size = ${CSV_BUFFER_BYTES}`
      : `buffer_size = ${recordBytes + 1}, max_line_size = ${recordBytes}`
  const options = part.format === 'csv' ? buffer : undefined
  const { columns, from } = readRecords(part.format, paths, fields, options)
  return `INSERT INTO ${table} (${targets}) SELECT ${columns.join(', ')} FROM ${from}`
}
