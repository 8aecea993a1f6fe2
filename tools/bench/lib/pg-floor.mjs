// The floor of a Node loader on this machine: the least a Node process can do to land a CSV file in
// PostgreSQL the way skipprd lands it. It starts, opens two connections, and sends the file's bytes,
// cut after a newline about every BATCH_BYTES, as `COPY … FROM STDIN (FORMAT csv)` in one transaction
// each, two at a time; then it exits. No WAL, no state, no config, no scanning beyond the newline.
// What skipprd adds to this is its own cost; what this loses to `psql \copy` is Node's and the
// machine's. Plain JavaScript, so no loader's start-up is counted.
// Usage: node lib/pg-floor.mjs <connection string> <table> <csv file with a header line>
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { lineBatches } from './line-batches.mjs'

/** skipprd's default BUFFER_THRESHOLD_BYTES. */
const BATCH_BYTES = 10 * 1024 * 1024
const CONNECTIONS = 2

const [url, table, file] = process.argv.slice(2)
const batches = await lineBatches(file, BATCH_BYTES)

async function load(client) {
  for (let body = await batches.next(); body !== undefined; body = await batches.next()) {
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
await batches.close()
