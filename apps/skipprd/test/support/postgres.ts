/** A PostgreSQL database of a test's own on the local server, created for it and dropped after. */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

export const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export interface FreshDatabase {
  readonly name: string
  /** The server's URL with this database's name. */
  readonly url: string
  /** A client connected to it. */
  readonly client: pg.Client
  /** Ends the client and drops the database, connections still open included. */
  drop(): Promise<void>
}

/** Creates `<prefix>_<random>` on the server of SKIPPR_TEST_PG_URL. */
export async function freshDatabase(prefix: string): Promise<FreshDatabase> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`
  await asAdmin((admin) => admin.query(`CREATE DATABASE ${name}`))
  const url = PG_URL.replace(/\/[^/]*$/, `/${name}`)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return {
    name,
    url,
    client,
    async drop() {
      await client.end()
      await asAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    },
  }
}

async function asAdmin(work: (admin: pg.Client) => Promise<unknown>): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  try {
    await work(admin)
  } finally {
    await admin.end()
  }
}
