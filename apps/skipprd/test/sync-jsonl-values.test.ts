/**
 * `skipprd sync` of a JSON-lines file into real PostgreSQL and DuckDB: integers beyond 2^53 and
 * up to ±2^63 land exact, and a value after the File source's inference sample that does not fit
 * the sampled type widens the column instead of being rounded or cut.
 */
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { query } from './support/duckdb.js'
import { pgSchemaPerTest, postgresSink, syncFiles } from './support/file-sync.js'
import { type Project, project } from './support/project.js'

/** More than the File source's 256 KiB sample, so that the last record is read after it. */
const SAMPLED_ROWS = 3000

const { admin, name: schemaName } = pgSchemaPerTest('skippr_jsonl')
let p: Project

beforeEach(async () => {
  p = await project()
  const sampled = Array.from(
    { length: SAMPLED_ROWS },
    (_, i) =>
      `{"id":${i},"max":9223372036854775807,"min":-9223372036854775808,"safe":9007199254740993,` +
      `"beyond":123456789012345678901234567890,"n":${i},"day":"2020-01-01","pad":"${'p'.repeat(80)}"}\n`,
  )
  const late = '{"id":-1,"max":1,"min":2,"safe":3,"beyond":4,"n":1.5,"day":"2020-01-02 10:30:00"}\n'
  await p.write('events.jsonl', sampled.join('') + late)
})
afterEach(async () => {
  await p.remove()
})

const sync = (sink: string) =>
  syncFiles(p, { events: 'path: events.jsonl, format: jsonl' }, sink, { events: SAMPLED_ROWS + 1 })

/** What a sampled row and the late row hold, as text (the late day as seconds since 1970 UTC). */
const EXPECTED = {
  sampled: {
    max: '9223372036854775807',
    min: '-9223372036854775808',
    safe: '9007199254740993',
    beyond: '123456789012345678901234567890',
  },
  late: { max: '1', min: '2', safe: '3', beyond: '4', n: '1.5', day: 1577961000 },
}

describe('JSON lines, values exact', () => {
  it('into PostgreSQL', async () => {
    const schema = schemaName()
    await sync(postgresSink(schema))
    const select = (id: number) =>
      admin.query(
        `SELECT max::text, min::text, safe::text, beyond, n::text, extract(epoch FROM day)::float8 AS day
           FROM "${schema}".events WHERE id = ${id}`,
      )
    const { rows: sampled } = await select(7)
    expect(sampled).toEqual([{ ...EXPECTED.sampled, n: '7', day: 1577836800 }])
    const { rows: late } = await select(-1)
    expect(late).toEqual([EXPECTED.late])
  })

  it('into DuckDB', async () => {
    await sync('Duckdb: { path: ./warehouse.duckdb }')
    const select = (id: number) =>
      query(
        path.join(p.dir, 'warehouse.duckdb'),
        `SELECT max::VARCHAR AS max, min::VARCHAR AS min, safe::VARCHAR AS safe, beyond,
                n::VARCHAR AS n, epoch(day) AS day
           FROM main.events WHERE id = ${id}`,
      )
    expect(await select(7)).toEqual([{ ...EXPECTED.sampled, n: '7.0', day: 1577836800 }])
    expect(await select(-1)).toEqual([EXPECTED.late])
  })
})
