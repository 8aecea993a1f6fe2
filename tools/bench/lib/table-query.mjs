/**
 * A query over a DuckDB file, opened for it and closed after: the in-table side of the query bench.
 * Run as a script (`node table-query.mjs <file> <sql>`) it prints the first row as JSON.
 */
import { DuckDBInstance } from '@duckdb/node-api'

export async function queryTable(file, sql) {
  const instance = await DuckDBInstance.create(file)
  try {
    const conn = await instance.connect()
    const reader = await conn.runAndReadAll(sql)
    conn.closeSync()
    return JSON.stringify(reader.getRows()[0]?.map(String))
  } finally {
    instance.closeSync()
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  console.log(await queryTable(process.argv[2], process.argv[3]))
