import pg from 'pg'

/**
 * A small pool in UTC (so a date widened to a timestamp means midnight UTC). A connection that
 * breaks while idle is dropped by the pool; one that breaks during a write fails that write.
 */
export function createPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'skippr',
    options: '-c TimeZone=UTC',
  })
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}
