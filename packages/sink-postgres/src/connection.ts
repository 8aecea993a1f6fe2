import pg from 'pg'

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
