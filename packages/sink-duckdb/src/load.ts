/**
 * The bulk path: each part's body is written to a file once and DuckDB's own parallel readers
 * (read_csv / read_json) parse it straight into the table, with the column types given
 * explicitly, so nothing is sniffed and no value passes through JavaScript. Parts of several
 * batches for one table load in one statement over their files.
 */
import { mkdir, mkdtemp, open, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { BatchPart, NamespaceSchema } from '@skippr/connector-api'
import { isProcessAlive } from '@skippr/connector-api'
import { columnsStruct, ident, literal } from './sql.js'

export type Part = BatchPart & { readonly schema: NamespaceSchema }

/**
 * read_csv's read unit (its default is 32 MiB, more than a whole batch). Smaller units let DuckDB's
 * threads share the files of a grouped load more evenly: two 10 MB batches load in about 85% of the
 * time at 2 MiB.
 */
const CSV_BUFFER_BYTES = 2 * 1024 * 1024

const DIR_PREFIX = 'sink-duckdb-'

/** The sink's directory of load files, one per open sink, removed on close. */
export class LoadFiles {
  private counter = 0
  private constructor(readonly dir: string) {}

  static async create(parent: string): Promise<LoadFiles> {
    await mkdir(parent, { recursive: true })
    await removeOrphans(parent)
    return new LoadFiles(await mkdtemp(path.join(parent, `${DIR_PREFIX}${process.pid}-`)))
  }

  /** Writes each body to a fresh file, runs `use` with their paths, and deletes them. */
  async with<T>(bodies: Uint8Array[], ext: string, use: (files: string[]) => Promise<T>): Promise<T> {
    const files = bodies.map(() => path.join(this.dir, `${++this.counter}.${ext}`))
    try {
      await Promise.all(bodies.map((body, i) => writeWhole(files[i]!, body)))
      return await use(files)
    } finally {
      await Promise.all(files.map((file) => rm(file, { force: true })))
    }
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true })
  }
}

/**
 * One write call for the whole body (fs.writeFile goes in 512 KiB steps, each waiting its turn on a
 * busy event loop).
 */
async function writeWhole(file: string, body: Uint8Array): Promise<void> {
  const handle = await open(file, 'w')
  try {
    for (let at = 0; at < body.length; ) at += (await handle.write(body, at)).bytesWritten
  } finally {
    await handle.close()
  }
}

/** Load directories left behind by processes that died (SIGKILL) in the middle of a load. */
async function removeOrphans(parent: string): Promise<void> {
  for (const name of await readdir(parent)) {
    const pid = Number(name.slice(DIR_PREFIX.length).split('-')[0])
    if (!name.startsWith(DIR_PREFIX) || !Number.isInteger(pid) || isProcessAlive(pid)) continue
    await rm(path.join(parent, name), { recursive: true, force: true })
  }
}

/**
 * Appends the rows of `parts` (one format, one schema) to `table` inside the caller's transaction,
 * in one statement; returns the rows inserted.
 */
export async function loadParts(
  conn: DuckDBConnection,
  table: string,
  parts: readonly Part[],
  files: LoadFiles,
): Promise<number> {
  const [first] = parts
  const bodies = parts.map((part) => part.body).filter((body) => body.length > 0)
  if (first === undefined || bodies.length === 0) return 0
  return files.with(bodies, first.format, async (paths) => {
    const result = await conn.run(insertSql(table, first, paths))
    return result.rowsChanged
  })
}

function insertSql(table: string, part: Part, paths: string[]): string {
  const files = `[${paths.map(literal).join(', ')}]`
  const fields = part.schema.fields
  const targets = fields.map((f) => ident(f.name)).join(', ')
  if (part.format === 'csv') {
    // CSV columns are positional: read them under neutral names so any field name is safe.
    const positional = fields.map((f, i) => ({ name: `c${i}`, type: f.type }))
    const sources = positional.map((c) => c.name).join(', ')
    return (
      `INSERT INTO ${table} (${targets}) SELECT ${sources} FROM read_csv(${files}, ` +
      `columns = ${columnsStruct(positional)}, header = false, auto_detect = false, delim = ',', ` +
      `quote = '"', escape = '"', allow_quoted_nulls = false, buffer_size = ${CSV_BUFFER_BYTES})`
    )
  }
  return (
    `INSERT INTO ${table} (${targets}) SELECT ${targets} FROM read_json(${files}, ` +
    `format = 'newline_delimited', records = true, columns = ${columnsStruct(fields)})`
  )
}
