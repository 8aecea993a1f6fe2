import pg from 'pg'

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
 * A small pool in UTC (so a date widened to a timestamp means midnight UTC). A connection that
 * breaks while idle is dropped by the pool; one that breaks during a write fails that write.
 */
export function createPool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: 4,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'skippr',
    options: '-c TimeZone=UTC',
  })
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}
