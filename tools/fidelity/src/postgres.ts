/** A fresh PostgreSQL database for one test file, dropped afterwards (trust auth, as in CI). */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'

/** Any database of the server; the suite creates its own beside it. */
export const ADMIN_URL_VARIABLE = 'SKIPPR_FIDELITY_PG_URL'
const ADMIN_URL = process.env[ADMIN_URL_VARIABLE] ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export interface Database {
  readonly url: string
  readonly pool: pg.Pool
  drop(): Promise<void>
}

export async function freshDatabase(role: string): Promise<Database> {
  const name = `skippr_fidelity_${role}_${randomBytes(5).toString('hex')}`
  await adminQuery(`CREATE DATABASE "${name}"`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 })
  // An idle connection the server closes is emitted on the pool, and unheard it would end the test
  // process; the next query opens a new connection and fails by itself if the server is gone.
  pool.on('error', () => {})
  return {
    url: url.toString(),
    pool,
    async drop() {
      await pool.end()
      await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    },
  }
}

/** A fresh database for the test file that calls this, made before its tests and dropped after them. */
export function databasePerFile(role: string): () => Database {
  let database: Database | undefined
  beforeAll(async () => {
    database = await freshDatabase(role)
  })
  afterAll(async () => {
    await database?.drop()
  })
  return () => {
    if (!database) throw new Error(`the ${role} database is made before the tests run`)
    return database
  }
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** A schema name no other run of the suite uses. */
export const runSchema = () => `run_${randomBytes(5).toString('hex')}`

/** skippr.yml's `${NAME}` reference: connection strings are secrets and must come from the environment. */
export const envReference = (name: string) => `\${${name}}`
