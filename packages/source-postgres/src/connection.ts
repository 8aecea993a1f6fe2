import pg from 'pg'
import { SourceUnavailableError } from './errors.js'

/**
 * Where a connection string points, without its password or query parameters: safe for messages
 * and logs. Keyword/value strings (`host=... password=...`) are not echoed at all.
 */
export function describeTarget(connectionString: string): string {
  try {
    const url = new URL(connectionString)
    const user = url.username ? `${decodeURIComponent(url.username)}@` : ''
    return `${url.protocol}//${user}${url.host}${url.pathname}`
  } catch {
    return 'the configured server'
  }
}

/**
 * One client in UTC with ISO dates and exact float output, so the CSV this source emits and the
 * key values it saves in offsets read the same whatever the server's defaults are.
 */
export async function connect(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString,
    application_name: 'skippr',
    connectionTimeoutMillis: 10_000,
    options: '-c TimeZone=UTC -c DateStyle=ISO,YMD -c extra_float_digits=1',
  })
  // A connection dropping while idle is reported as an event; the next query fails and says so.
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    await client.end().catch(() => {})
    throw new SourceUnavailableError(describeTarget(connectionString), { cause: error })
  }
  return client
}
