/** `check` and `count` against the real PostgreSQL: what `skipprd doctor` and `verify` ask the source. */
import { parseConnectorConfig, silentLogger } from '@skippr/connector-api'
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

describe('check', () => {
  it('connects and finds every configured table', async () => {
    await db.sql('CREATE TABLE items (id int PRIMARY KEY)')
    await open(['items']).check()
  })

  it('names a configured table that does not exist', async () => {
    await db.sql('CREATE TABLE items (id int PRIMARY KEY)')
    await expect(open(['items', 'gone']).check()).rejects.toMatchObject({
      code: TABLE_NOT_FOUND,
      message: expect.stringContaining(`${db.schema}.gone`),
    })
  })

  it('names the server, without its password, when nothing listens there', async () => {
    await expect(open(['items'], 'postgres://app:s3cret-pw@127.0.0.1:1/test').check()).rejects.toMatchObject({
      code: SOURCE_UNAVAILABLE,
      message: expect.stringMatching(/^(?!.*s3cret-pw).*postgres:\/\/app@127\.0\.0\.1:1\/test/s),
    })
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
