/** One ZooKeeper and one ClickHouse replica for a test file, and fresh databases on it. */
import { randomBytes } from 'node:crypto'
import { silentLogger } from '@skippr/connector-api'
import { type Clickhouse, startClickhouse, startZookeeper, type Zookeeper } from '@skippr/test-servers'
import { ClickhouseSink, type ClickhouseSinkOptions } from '../src/index.js'
import { qualifiedName, quoteString } from '../src/sql.js'

export interface TestServer {
  readonly clickhouse: Clickhouse
  /** A database name no other test uses (not created: the sink creates it). */
  database(label: string): string
  sink(options: Partial<ClickhouseSinkOptions> & { database: string }): ClickhouseSink
  /** `SELECT * … FORMAT JSON`, values as the server returns them; [] when the table does not exist. */
  rows(database: string, table: string, orderBy?: string): Promise<Record<string, unknown>[]>
  /** One value of a query. */
  value(sql: string): Promise<string>
  stop(): Promise<void>
}

export async function startTestServer(): Promise<TestServer> {
  const zookeeper: Zookeeper = await startZookeeper()
  let clickhouse: Clickhouse
  try {
    clickhouse = await startClickhouse({ zookeeper })
  } catch (error) {
    await zookeeper.stop()
    throw error
  }
  const tag = randomBytes(3).toString('hex')
  return {
    clickhouse,
    database: (label) => `t_${tag}_${label}`,
    sink: (options) =>
      new ClickhouseSink(
        { url: clickhouse.url, username: clickhouse.user, password: clickhouse.password, ...options },
        silentLogger,
      ),
    async rows(database, table, orderBy) {
      const exists = await clickhouse.query(
        `SELECT count() FROM system.tables WHERE database = ${quoteString(database)} AND name = ${quoteString(table)}`,
      )
      if (exists.trim() === '0') return []
      const order = orderBy ? ` ORDER BY ${orderBy}` : ''
      const text = await clickhouse.query(
        `SELECT * FROM ${qualifiedName(database, table)}${order} FORMAT JSON`,
      )
      return (JSON.parse(text) as { data: Record<string, unknown>[] }).data
    },
    async value(sql) {
      return (await clickhouse.query(sql)).trim()
    },
    async stop() {
      await clickhouse.stop()
      await zookeeper.stop()
    },
  }
}
