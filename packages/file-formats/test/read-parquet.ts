import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'

/** Reads Parquet bytes the way a user would: DuckDB's read_parquet on a file. */
export interface ParquetReader {
  /** Writes `chunks` to a file and runs `sql(source)`, where `source` is a quoted read_parquet(…) call. */
  query(chunks: readonly Uint8Array[], sql: (source: string) => string): Promise<Record<string, unknown>[]>
  /** Runs SQL that names no file (e.g. DuckDB's own parse of a literal). */
  run(sql: string): Promise<Record<string, unknown>[]>
  /** The path of a file holding `chunks`, for DuckDB's metadata functions. */
  file(chunks: readonly Uint8Array[]): Promise<string>
  close(): Promise<void>
}

/** An in-memory DuckDB with its session time zone UTC, so timestamps print as UTC. */
export async function openParquetReader(): Promise<ParquetReader> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-parquet-'))
  const instance = await DuckDBInstance.create(':memory:')
  const conn: DuckDBConnection = await instance.connect()
  await conn.run("SET TimeZone = 'UTC'")
  let files = 0
  const run = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJS()
  const file = async (chunks: readonly Uint8Array[]) => {
    const name = path.join(dir, `${files++}.parquet`)
    await writeFile(name, Buffer.concat(chunks))
    return name
  }
  return {
    run,
    file,
    async query(chunks, sql) {
      const name = await file(chunks)
      return run(sql(`read_parquet('${name.replaceAll("'", "''")}', file_row_number = true)`))
    },
    async close() {
      conn.closeSync()
      instance.closeSync()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
