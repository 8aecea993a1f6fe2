/**
 * The HTTP client, as the three kinds of request this sink makes: a statement, a query for rows,
 * and an insert of RowBinary bytes. Names are always qualified, so no request depends on a
 * session's or the URL's database (one that does not exist yet would fail every request).
 */
import { Readable } from 'node:stream'
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client'
import type { ClickhouseSinkConfig } from './config.js'

type Settings = Record<string, string | number | boolean>

export class Connection {
  private readonly client: ClickHouseClient
  private version: Promise<readonly number[]> | undefined

  constructor(config: ClickhouseSinkConfig) {
    this.client = createClient({
      url: config.url,
      username: config.username,
      password: config.password ?? '',
      // The sink reports failures itself, as outcomes; the client's own log would print them twice.
      log: { level: ClickHouseLogLevel.OFF },
      request_timeout: 120_000,
    })
  }

  async command(sql: string, settings: Settings = {}): Promise<void> {
    await this.client.command({ query: sql, clickhouse_settings: settings })
  }

  async rows<T>(sql: string): Promise<T[]> {
    const result = await this.client.query({ query: sql, format: 'JSONEachRow' })
    return result.json<T>()
  }

  /** Sends `body` as the data of `sql` (an `INSERT … FORMAT RowBinary`) in one request. */
  async insert(sql: string, body: Uint8Array, settings: Settings): Promise<void> {
    const result = await this.client.exec({
      query: sql,
      values: Readable.from([body]),
      clickhouse_settings: settings,
    })
    result.stream.resume()
    await new Promise((resolve, reject) => result.stream.once('end', resolve).once('error', reject))
  }

  /** The server's version as numbers (`18.16.1` → [18, 16, 1]), asked once. */
  serverVersion(): Promise<readonly number[]> {
    this.version ??= this.rows<{ v: string }>('SELECT version() AS v').then(([row]) =>
      (row?.v ?? '').split('.').map(Number),
    )
    this.version.catch(() => {
      this.version = undefined
    })
    return this.version
  }

  async close(): Promise<void> {
    await this.client.close()
  }
}
