// The floor of a Node loader on this machine: the least a Node process can do to land a CSV file in
// PostgreSQL the way skipprd lands it. It starts, opens two connections, and sends the file's bytes,
// cut after a newline about every BATCH_BYTES, as `COPY … FROM STDIN (FORMAT csv)` in one transaction
// each, two at a time; then it exits. No WAL, no state, no config, no scanning beyond the newline.
// What skipprd adds to this is its own cost; what this loses to `psql \copy` is Node's and the
// machine's. Plain JavaScript, so no loader's start-up is counted.
// Usage: node lib/pg-floor.mjs <connection string> <table> <csv file with a header line>
import { open } from 'node:fs/promises'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'

/** skipprd's default BUFFER_THRESHOLD_BYTES. */
const BATCH_BYTES = 10 * 1024 * 1024
const CONNECTIONS = 2
const NEWLINE = 0x0a

const [url, table, file] = process.argv.slice(2)
const handle = await open(file)
const size = (await handle.stat()).size
let position = 0
let claims = Promise.resolve()

/** The next run of whole lines (the header skipped), or undefined at the end; one caller at a time. */
function nextBody() {
  const body = claims.then(readBody)
  claims = body.then(() => {})
  return body
}

async function readBody() {
  if (position >= size) return undefined
  const buffer = Buffer.allocUnsafe(BATCH_BYTES)
  const { bytesRead } = await handle.read(buffer, 0, BATCH_BYTES, position)
  const atEnd = position + bytesRead >= size
  const end = atEnd ? bytesRead : buffer.lastIndexOf(NEWLINE, bytesRead - 1) + 1
  if (end === 0) throw new Error(`a line of ${file} is longer than ${BATCH_BYTES} bytes`)
  const start = position === 0 ? buffer.indexOf(NEWLINE) + 1 : 0
  position += end
  return buffer.subarray(start, end)
}

async function load(client) {
  for (let body = await nextBody(); body !== undefined; body = await nextBody()) {
    await client.query('BEGIN')
    await new Promise((resolve, reject) => {
      const copy = client.query(copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv)`))
      copy.on('finish', resolve).on('error', reject)
      copy.end(body)
    })
    await client.query('COMMIT')
  }
}

const clients = Array.from({ length: CONNECTIONS }, () => new pg.Client({ connectionString: url }))
await Promise.all(clients.map((client) => client.connect()))
await Promise.all(clients.map(load))
await Promise.all(clients.map((client) => client.end()))
await handle.close()
