/** `check` and `count` against the real PostgreSQL: what `skipprd doctor` and `verify` ask the source. */
import { hasCode, parseConnectorConfig, silentLogger } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PostgresSourceConfig } from '../src/index.js'
import { source as definition, PostgresSource, SOURCE_UNAVAILABLE, TABLE_NOT_FOUND } from '../src/index.js'
import type { TestDb } from './db.js'
import { freshSchema, PG_URL } from './db.js'

let db: TestDb
const opened: PostgresSource[] = []
beforeEach(async () => {
  db = await freshSchema()
})
afterEach(async () => {
  for (const source of opened.splice(0)) await source.close()
  await db.drop()
})

function open(tables: string[], url = PG_URL): PostgresSource {
  const config: PostgresSourceConfig = parseConnectorConfig(
    definition,
    { connection_string: url, tables: tables.map((name) => ({ name, schema: db.schema })) },
    { file: 'skippr.yml', path: 'data_sources.db.Postgres' },
  )
  const source = new PostgresSource(config, silentLogger)
  opened.push(source)
  return source
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a failure')
    },
    (error: Error) => error,
  )
}

describe('check', () => {
  it('connects and finds every configured table', async () => {
    await db.sql('CREATE TABLE items (id int PRIMARY KEY)')
    await open(['items']).check()
  })

  it('names a configured table that does not exist', async () => {
    await db.sql('CREATE TABLE items (id int PRIMARY KEY)')
    const error = await rejection(open(['items', 'gone']).check())
    expect(hasCode(error, TABLE_NOT_FOUND)).toBe(true)
    expect(error.message).toContain(`${db.schema}.gone`)
  })

  it('names the server, without its password, when nothing listens there', async () => {
    const error = await rejection(open(['items'], 'postgres://app:s3cret-pw@127.0.0.1:1/test').check())
    expect(hasCode(error, SOURCE_UNAVAILABLE)).toBe(true)
    expect(error.message).toContain('postgres://app@127.0.0.1:1/test')
    expect(error.message).not.toContain('s3cret-pw')
  })
})

describe('count', () => {
  it("counts the table's rows now, and 0 for a namespace that is no configured table", async () => {
    await db.sql('CREATE TABLE items (id int PRIMARY KEY)')
    await db.sql('INSERT INTO items SELECT generate_series(1, 25)')
    const source = open(['items'])
    expect(await source.count('items')).toBe(25)
    await db.sql('INSERT INTO items VALUES (26)')
    expect(await source.count('items')).toBe(26)
    expect(await source.count('other')).toBe(0)
  })
})
