// The bare BigQuery load beside skipprd's: a Node process that loads the very bytes skipprd's sink
// uploaded (captured by the fake, CSV or JSON lines) through @google-cloud/bigquery, one after
// another, each by `table.load` (a load job's multipart upload, then the SDK's poll until DONE)
// appending to the table, as a user's script would. No staging table, no ledger, no transaction:
// what skipprd adds to this is its own cost. Plain JavaScript, so no loader's start-up is counted.
// Usage: SKIPPR_BENCH_WH_TARGET=<json> node lib/bigquery-load.mjs <file>…
//   target: { endpoint, project, token, dataset, table }
import { BigQuery } from '@google-cloud/bigquery'

const target = JSON.parse(process.env.SKIPPR_BENCH_WH_TARGET ?? '{}')
const files = process.argv.slice(2)
const headers = { Authorization: `Bearer ${target.token}` }
const client = new BigQuery({
  projectId: target.project,
  apiEndpoint: target.endpoint,
  authClient: {
    getAccessToken: async () => ({ token: target.token }),
    getRequestHeaders: async () => headers,
  },
})
const table = client.dataset(target.dataset).table(target.table)
for (const file of files) {
  const csv = file.endsWith('.csv')
  await table.load(file, {
    sourceFormat: csv ? 'CSV' : 'NEWLINE_DELIMITED_JSON',
    writeDisposition: 'WRITE_APPEND',
    ...(csv ? { allowQuotedNewlines: true, quote: '"', encoding: 'UTF-8' } : {}),
  })
}
