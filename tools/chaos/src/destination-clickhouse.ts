/**
 * ClickHouse as a chaos destination: a server of its own (and a ZooKeeper for the replicated
 * engine), started for the run and stopped on dispose. On `MergeTree` a retry may land a batch
 * part again (at least once, each copy tagged); on `ReplicatedMergeTree` the server drops the
 * repeated block, so the run must end with no copy at all.
 */
import { randomBytes } from 'node:crypto'
import type { Clickhouse } from '@skippr/test-servers'
import { startClickhouse, startZookeeper } from '@skippr/test-servers'
import type { Destination } from './destination.js'
import { duckdbMirror, mirrorEpochSeconds } from './duckdb-mirror.js'

export async function clickhouseDestination(workDir: string, replicated: boolean): Promise<Destination> {
  const zookeeper = replicated ? await startZookeeper() : undefined
  const server = await startClickhouse(zookeeper ? { zookeeper } : {}).catch(async (error: unknown) => {
    await zookeeper?.stop()
    throw error
  })
  const database = `skippr_chaos_${randomBytes(6).toString('hex')}`
  const engine = replicated ? 'ReplicatedMergeTree' : 'MergeTree'
  const mirror = duckdbMirror(workDir, async () => ({
    lines: await server.query(`SELECT * FROM \`${database}\`.rentals FORMAT JSONEachRow`),
    columns: await duckdbTypes(server, database, 'rentals'),
  }))
  return {
    label: `ClickHouse ${engine} database ${database} at ${server.url}`,
    sink: { Clickhouse: { url: server.url, database, engine } },
    env: {},
    retriesCopy: replicated ? false : 'parts',
    schema: 'main',
    table: 'main."rentals"',
    qualify: (table) => `main."${table}"`,
    epochSeconds: mirrorEpochSeconds,
    query: (sql) => mirror.query(sql),
    async dispose() {
      mirror.close()
      await server.stop()
      await zookeeper?.stop()
    },
  }
}

/**
 * The table's columns as DuckDB types. 18.16 quotes every Int64 in JSON output (it has no
 * output_format_json_quote_64bit_integers), so without them DuckDB would read the ids as text.
 */
async function duckdbTypes(
  server: Clickhouse,
  database: string,
  table: string,
): Promise<Record<string, string>> {
  const text = await server.query(
    `SELECT name, type FROM system.columns WHERE database = '${database}' AND table = '${table}' FORMAT JSONEachRow`,
  )
  const columns: Record<string, string> = {}
  for (const line of text.split('\n').filter(Boolean)) {
    const { name, type } = JSON.parse(line) as { name: string; type: string }
    columns[name] = duckdbType(type.replace(/^Nullable\((.*)\)$/, '$1'))
  }
  return columns
}

function duckdbType(clickhouse: string): string {
  if (clickhouse === 'Int64') return 'BIGINT'
  if (clickhouse === 'Int32') return 'INTEGER'
  if (clickhouse === 'Float64') return 'DOUBLE'
  return 'VARCHAR' // String, and the sink's Enum8 booleans, which read back as 'true' / 'false'
}
