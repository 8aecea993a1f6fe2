/**
 * The cloud warehouses Snowflake and BigQuery as chaos destinations: each sink talks, through its
 * official SDK, to the protocol-level fake of `@skippr/test-servers`, which runs in the harness's
 * process (a SIGKILL of skipprd cuts its requests short, never the server) and keeps the rows in
 * a DuckDB file of the working dir. After the last run the fake is stopped and its file opened,
 * so the checks read the very rows the sink committed.
 */
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { startFakeBigquery, startFakeSnowflake } from '@skippr/test-servers'
import type { Destination } from './destination.js'

const SNOWFLAKE_PASSWORD_VARIABLE = 'SKIPPR_CHAOS_SNOWFLAKE_PASSWORD'
const BIGQUERY_TOKEN_VARIABLE = 'SKIPPR_CHAOS_BIGQUERY_TOKEN'
const DATASET = 'skippr_chaos'
const DETACHED_TRANSACTION_MS = 1000

export async function snowflakeDestination(workDir: string): Promise<Destination> {
  const file = path.join(workDir, 'snowflake.duckdb')
  // A killed run's open transaction blocks the next run's writes until the fake rolls it back:
  // Snowflake's 5 minutes shortened, as the writer lease's TTL is.
  const server = await startFakeSnowflake({ path: file, detachedTransactionMs: DETACHED_TRANSACTION_MS })
  return warehouseDestination(file, 'PUBLIC', () => server.stop(), {
    label: `Snowflake database ${server.database} at ${server.accessUrl} (fake, DuckDB file ${file})`,
    sink: {
      Snowflake: {
        account: server.account,
        username: server.username,
        password: `\${${SNOWFLAKE_PASSWORD_VARIABLE}}`,
        warehouse: server.warehouse,
        database: server.database,
        access_url: server.accessUrl,
      },
    },
    env: { [SNOWFLAKE_PASSWORD_VARIABLE]: server.password },
  })
}

export async function bigqueryDestination(workDir: string): Promise<Destination> {
  const file = path.join(workDir, 'bigquery.duckdb')
  const server = await startFakeBigquery({ path: file })
  return warehouseDestination(file, DATASET, () => server.stop(), {
    label: `BigQuery dataset ${server.project}.${DATASET} at ${server.endpoint} (fake, DuckDB file ${file})`,
    sink: {
      Bigquery: {
        project: server.project,
        dataset: DATASET,
        access_token: `\${${BIGQUERY_TOKEN_VARIABLE}}`,
        api_endpoint: server.endpoint,
      },
    },
    env: { [BIGQUERY_TOKEN_VARIABLE]: server.token },
  })
}

/** The fake's DuckDB file, opened on the first query once the fake is stopped (it holds the file's lock). */
function warehouseDestination(
  file: string,
  schema: string,
  stopServer: () => Promise<void>,
  entry: Pick<Destination, 'label' | 'sink' | 'env'>,
): Destination {
  let stopped: Promise<void> | undefined
  const stop = () => {
    stopped ??= stopServer()
    return stopped
  }
  let instance: DuckDBInstance | undefined
  let connection: Awaited<ReturnType<DuckDBInstance['connect']>> | undefined
  return {
    ...entry,
    retriesCopy: false,
    schema,
    table: `"${schema}"."rentals"`,
    qualify: (table) => `"${schema}"."${table}"`,
    epochSeconds: (column) => `CAST(epoch(${column}) AS BIGINT)`,
    async query(sql) {
      if (!connection) {
        await stop()
        instance = await DuckDBInstance.create(file)
        connection = await instance.connect()
      }
      return (await connection.runAndReadAll(sql)).getRowObjectsJS()
    },
    async dispose() {
      connection?.closeSync()
      instance?.closeSync()
      await stop()
    },
  }
}
