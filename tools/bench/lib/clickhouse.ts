/**
 * ClickHouse's own bulk load beside skipprd's: `clickhouse-client --query "INSERT … FORMAT …" < file`
 * into a server the bench started (@skippr/test-servers), and the files it loads, written by the
 * server from the table skipprd's sink filled, so they hold exactly the rows and values the sink sent.
 */
import type { Clickhouse } from '@skippr/test-servers'
import { ensureOk, type Measured, measure } from './process.js'

const CLIENT = 'clickhouse-client'
/** 18.16 quotes 64-bit integers in JSON by default; the sink's values are numbers. */
const JSON_NUMBERS = '--output_format_json_quote_64bit_integers=0'

const clientArgs = (server: Clickhouse, query: string) => [
  '--host',
  '127.0.0.1',
  '--port',
  String(server.tcpPort),
  '--user',
  'default',
  '--query',
  query,
]

/** `clickhouse-client --query "INSERT INTO table FORMAT format" < file`, timed from spawn to exit. */
export async function clientInsert(
  server: Clickhouse,
  table: string,
  format: string,
  file: string,
): Promise<Measured> {
  return ensureOk(
    `clickhouse-client INSERT … FORMAT ${format}`,
    await measure(CLIENT, clientArgs(server, `INSERT INTO ${table} FORMAT ${format}`), { stdin: file }),
  )
}

/** Writes every row of `table` to `file` in `format`. */
export async function exportTable(
  server: Clickhouse,
  table: string,
  format: string,
  file: string,
): Promise<void> {
  const query = `SELECT * FROM ${table} FORMAT ${format}`
  ensureOk(
    `clickhouse-client SELECT … FORMAT ${format}`,
    await measure(CLIENT, [...clientArgs(server, query), JSON_NUMBERS], { stdout: file }),
  )
}

export async function countRows(server: Clickhouse, table: string): Promise<number> {
  return Number((await server.query(`SELECT count() FROM ${table}`)).trim())
}
