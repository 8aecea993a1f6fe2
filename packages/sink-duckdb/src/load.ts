/**
 * The bulk path: a part's body is written to a file once and DuckDB's own parallel readers
 * (read_csv / read_json) parse it straight into the table, with the column types given
 * explicitly, so nothing is sniffed and no value passes through JavaScript.
 */
import { mkdir, mkdtemp, open, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { BatchPart, NamespaceSchema } from '@skippr/connector-api'
import { isProcessAlive } from '@skippr/connector-api'
import { columnsStruct, ident, literal } from './sql.js'

type Part = BatchPart & { readonly schema: NamespaceSchema }

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

  /** Writes `body` to a fresh file, runs `use` with its path, and deletes it. */
  async with<T>(body: Uint8Array, ext: string, use: (file: string) => Promise<T>): Promise<T> {
    const file = path.join(this.dir, `${++this.counter}.${ext}`)
    try {
      await writeWhole(file, body)
      return await use(file)
    } finally {
      await rm(file, { force: true })
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

/** Appends one part's rows to `table` inside the caller's transaction; returns the rows inserted. */
export async function loadPart(
  conn: DuckDBConnection,
  table: string,
  part: Part,
  files: LoadFiles,
): Promise<number> {
  return files.with(part.body, part.format, async (file) => {
    const result = await conn.run(insertSql(table, part, file))
    return result.rowsChanged
  })
}

function insertSql(table: string, part: Part, file: string): string {
  const fields = part.schema.fields
  const targets = fields.map((f) => ident(f.name)).join(', ')
  if (part.format === 'csv') {
    // CSV columns are positional: read them under neutral names so any field name is safe.
    const positional = fields.map((f, i) => ({ name: `c${i}`, type: f.type }))
    const sources = positional.map((c) => c.name).join(', ')
    return (
      `INSERT INTO ${table} (${targets}) SELECT ${sources} FROM read_csv(${literal(file)}, ` +
      `columns = ${columnsStruct(positional)}, header = false, auto_detect = false, delim = ',', ` +
      `quote = '"', escape = '"', allow_quoted_nulls = false)`
    )
  }
  return (
    `INSERT INTO ${table} (${targets}) SELECT ${targets} FROM read_json(${literal(file)}, ` +
    `format = 'newline_delimited', records = true, columns = ${columnsStruct(fields)})`
  )
}
