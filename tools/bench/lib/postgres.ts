/** PostgreSQL pieces the benchmarks share: a fresh schema, a timed `psql \copy`, a row count. */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { ensureOk, type Measured, measure } from './process.js'

export const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export interface BenchSchema {
  readonly name: string
  readonly client: pg.Client
  drop(): Promise<void>
}

export async function freshSchema(prefix: string): Promise<BenchSchema> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  await client.query(`CREATE SCHEMA "${name}"`)
  return {
    name,
    client,
    async drop() {
      await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
      await client.end()
    },
  }
}

/** `psql -c "\copy table FROM 'file' WITH (FORMAT csv[, HEADER])"`, timed as a whole process. */
export async function psqlCopy(table: string, file: string, header: boolean): Promise<Measured> {
  const url = new URL(PG_URL)
  const options = header ? 'FORMAT csv, HEADER' : 'FORMAT csv'
  const args = ['-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username)]
  args.push(
    url.pathname.slice(1),
    '-v',
    'ON_ERROR_STOP=1',
    '-c',
    `\\copy ${table} FROM '${file}' WITH (${options})`,
  )
  return ensureOk('psql \\copy', await measure('psql', args))
}

export async function countRows(client: pg.Client, table: string): Promise<number> {
  const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)
  return Number(rows[0]?.n)
}

/** The rows of `table` committed so far: 0 while it does not exist, before a loader that makes it has. */
export async function committedRows(client: pg.Client, table: string): Promise<number> {
  try {
    return await countRows(client, table)
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return 0
    throw error
  }
}
