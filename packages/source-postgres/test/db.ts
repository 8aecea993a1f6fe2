import { randomBytes } from 'node:crypto'
import pg from 'pg'

export const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A client on a schema of its own, dropped by `drop()`. */
export interface TestDb {
  readonly client: pg.Client
  readonly schema: string
  sql(text: string, values?: unknown[]): Promise<pg.QueryResult>
  drop(): Promise<void>
}

export async function freshSchema(): Promise<TestDb> {
  const schema = `skippr_test_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  await client.query(`CREATE SCHEMA ${schema}`)
  await client.query(`SET search_path TO ${schema}`)
  return {
    client,
    schema,
    sql: (text, values) => client.query(text, values),
    async drop() {
      await client.query(`DROP SCHEMA ${schema} CASCADE`)
      await client.end()
    },
  }
}

/** RFC 4180 rows; an unquoted empty field is null, `""` is the empty string. */
export function parseCsv(bytes: Uint8Array): (string | null)[][] {
  const text = new TextDecoder().decode(bytes)
  const rows: (string | null)[][] = []
  let row: (string | null)[] = []
  let i = 0
  while (i < text.length) {
    let value: string | null
    if (text[i] === '"') {
      let end = i + 1
      value = ''
      for (;;) {
        const quote = text.indexOf('"', end)
        value += text.slice(end, quote)
        if (text[quote + 1] === '"') {
          value += '"'
          end = quote + 2
        } else {
          i = quote + 1
          break
        }
      }
    } else {
      let end = i
      while (end < text.length && text[end] !== ',' && text[end] !== '\n') end++
      value = end === i ? null : text.slice(i, end)
      i = end
    }
    row.push(value)
    if (text[i] === ',') i++
    else {
      rows.push(row)
      row = []
      i++
    }
  }
  return rows
}
