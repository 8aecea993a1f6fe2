// DuckDB's own load of a CSV file, in a process of its own as skipprd's is: prints the statement's
// time and the table's row count. Plain JavaScript, so no loader's start-up is counted.
// Usage: node lib/read-csv.mjs <database file> <csv file>
import { DuckDBInstance } from '@duckdb/node-api'

const [database, csv] = process.argv.slice(2)
const instance = await DuckDBInstance.create(database)
const connection = await instance.connect()
const started = performance.now()
await connection.run(`CREATE TABLE t AS SELECT * FROM read_csv('${csv.replaceAll("'", "''")}')`)
const ms = performance.now() - started
const rows = Number((await connection.runAndReadAll('SELECT count(*) FROM t')).getRows()[0][0])
connection.closeSync()
instance.closeSync()
console.log(JSON.stringify({ ms, rows }))
