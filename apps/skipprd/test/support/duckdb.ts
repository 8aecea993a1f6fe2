/** Reads a DuckDB file the CLI wrote (after it exited: DuckDB lets one process open a file for writing). */
import { DuckDBInstance } from '@duckdb/node-api'

export async function query(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' })
  try {
    const connection = await instance.connect()
    try {
      const reader = await connection.runAndReadAll(sql)
      return reader.getRowObjectsJS() as Record<string, unknown>[]
    } finally {
      connection.closeSync()
    }
  } finally {
    instance.closeSync()
  }
}

/** Rows and distinct rental ids in the rentals table. */
export async function rentalCounts(file: string): Promise<{ rows: number; unique: number }> {
  const [row] = await query(
    file,
    'SELECT count(*) AS rows, count(DISTINCT rental_id) AS uniq FROM main.rentals',
  )
  return { rows: Number(row?.rows), unique: Number(row?.uniq) }
}

/** Writes the rows of `select` to a Parquet file, as a data platform would. */
export async function writeParquet(file: string, select: string): Promise<void> {
  await duckRows(`COPY (${select}) TO '${file}' (FORMAT parquet)`)
}

/** The rows of `sql` run in an in-memory DuckDB (which reads Parquet files with `read_parquet`). */
export async function duckRows(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:')
  try {
    const connection = await instance.connect()
    try {
      return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[]
    } finally {
      connection.closeSync()
    }
  } finally {
    instance.closeSync()
  }
}
