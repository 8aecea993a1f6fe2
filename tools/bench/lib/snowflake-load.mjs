// The bare Snowflake load beside skipprd's: a Node process that loads the very files skipprd's sink
// staged (captured by the fake, gzip CSV or JSON lines) through snowflake-sdk, one after another,
// each by a PUT to the table's stage and a COPY INTO the table in autocommit, as a user's script
// would. No ledger, no fence, no transaction: what skipprd adds to this is its own cost.
// Plain JavaScript, so no loader's start-up is counted.
// Usage: SKIPPR_BENCH_WH_TARGET=<json> node lib/snowflake-load.mjs <file>…
//   target: { accessUrl, account, username, password, warehouse, database, schema, table, columns }
import { basename } from 'node:path'
import snowflake from 'snowflake-sdk'

const target = JSON.parse(process.env.SKIPPR_BENCH_WH_TARGET ?? '{}')
const files = process.argv.slice(2)
const quote = (name) => `"${name.replaceAll('"', '""')}"`
const table = `${target.database}.${target.schema}.${quote(target.table)}`
const stage = `@${target.database}.${target.schema}.%${quote(target.table)}/bare/`
const CSV = "TYPE = CSV FIELD_OPTIONALLY_ENCLOSED_BY = '\"' EMPTY_FIELD_AS_NULL = TRUE COMPRESSION = GZIP"

snowflake.configure({
  logLevel: 'OFF',
  customLogger: { error() {}, warn() {}, info() {}, debug() {}, trace() {} },
})
const connection = snowflake.createConnection({
  account: target.account,
  username: target.username,
  password: target.password,
  warehouse: target.warehouse,
  database: target.database,
  schema: target.schema,
  accessUrl: target.accessUrl,
})
await new Promise((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve())))
const run = (sqlText) =>
  new Promise((resolve, reject) =>
    connection.execute({ sqlText, complete: (error, _s, rows) => (error ? reject(error) : resolve(rows)) }),
  )
try {
  for (const file of files) {
    const name = basename(file)
    await run(
      `PUT 'file://${file}' '${stage}' AUTO_COMPRESS = FALSE SOURCE_COMPRESSION = GZIP OVERWRITE = TRUE`,
    )
    const copy = name.includes('.csv')
      ? `COPY INTO ${table} (${target.columns.map(quote).join(', ')}) FROM '${stage}${name}' FILE_FORMAT = (${CSV})`
      : `COPY INTO ${table} FROM '${stage}${name}' FILE_FORMAT = (TYPE = JSON COMPRESSION = GZIP) MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE`
    await run(`${copy} ON_ERROR = ABORT_STATEMENT PURGE = TRUE`)
  }
} finally {
  await new Promise((resolve) => connection.destroy(() => resolve()))
}
