// The floor of a Node loader on this machine: the least a Node process can do to land a CSV file in
// DuckDB the way skipprd lands it. It starts, opens the database, and cuts the file's bytes after a
// newline about every BATCH_BYTES; each run of lines is written to a load file, and the files waiting
// when the connection frees load in one transaction of one `INSERT … SELECT … FROM read_csv([…])`
// with the column types and read options the sink gives, grouped as it groups them (the first alone,
// then two or so at a time); then it exits. No WAL, no state, no config, no scanning beyond the
// newline, no ledger. What skipprd adds to this is its own cost; what this loses to DuckDB's own
// `read_csv` is Node's and the load files'. Plain JavaScript, so no loader's start-up is counted.
// Usage: node lib/duckdb-floor.mjs <database file with the table> <table> <csv file with a header line>
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { lineBatches } from './line-batches.mjs'

/** skipprd's default BUFFER_THRESHOLD_BYTES. */
const BATCH_BYTES = 10 * 1024 * 1024
/** Batches read ahead of the landing, as the sink's three writes in flight allow. */
const READ_AHEAD = 2

const [database, table, file] = process.argv.slice(2)
const quote = (text) => `'${text.replaceAll("'", "''")}'`
const instance = await DuckDBInstance.create(database)
const connection = await instance.connect()
// The settings the sink's connection runs (sink-duckdb's loadSettings): without max_vacuum_tasks = 0
// closing the database rewrites the row groups each landing left partly filled.
await connection.run(
  "SET TimeZone = 'UTC'; SET memory_limit = '256MB'; SET max_vacuum_tasks = 0; " +
    "SET allocator_bulk_deallocation_flush_threshold = '32MB'",
)
const types = (
  await connection.runAndReadAll(
    `SELECT data_type FROM duckdb_columns() WHERE table_name = ${quote(table)} ORDER BY column_index`,
  )
).getRows()
const columns = `{${types.map(([type], i) => `'c${i}': ${quote(type)}`).join(', ')}}`
const loadDir = await mkdtemp(path.join(path.dirname(database), 'floor-'))
const batches = await lineBatches(file, BATCH_BYTES)
const waiting = []
let readAll = false
let wakeLander = () => {}
let wakeReader = () => {}
let written = 0

/** The next run of lines in a load file of its own, or undefined at the end. */
async function nextFile() {
  const body = await batches.next()
  if (body === undefined) return undefined
  const loadFile = path.join(loadDir, `${++written}.csv`)
  await writeFile(loadFile, body)
  return loadFile
}

async function read() {
  for (let next = await nextFile(); next !== undefined; next = await nextFile()) {
    waiting.push(next)
    wakeLander()
    while (waiting.length >= READ_AHEAD) await new Promise((resolve) => (wakeReader = resolve))
  }
  readAll = true
  wakeLander()
}

async function land() {
  for (;;) {
    if (waiting.length === 0) {
      if (readAll) return
      await new Promise((resolve) => (wakeLander = resolve))
      continue
    }
    const files = waiting.splice(0)
    wakeReader()
    await connection.run(
      `BEGIN; SET preserve_insertion_order = ${files.length < 2}; INSERT INTO ${table} ` +
        `SELECT * FROM read_csv([${files.map(quote).join(', ')}], columns = ${columns}, header = false, ` +
        `auto_detect = false, delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, ` +
        `buffer_size = ${2 * 1024 * 1024}); COMMIT`,
    )
    await Promise.all(files.map((loaded) => rm(loaded)))
  }
}

await Promise.all([read(), land()])
connection.closeSync()
instance.closeSync()
await batches.close()
await rm(loadDir, { recursive: true, force: true })
