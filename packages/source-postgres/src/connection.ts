import { describeTarget } from '@skippr/connector-api'
import pg from 'pg'
import { SourceUnavailableError } from './errors.js'

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
