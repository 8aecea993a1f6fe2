/**
 * `skipprd sync --once` of real-world CSV shapes into real PostgreSQL and DuckDB, read back value by
 * value: a quote inside an unquoted field, a line holding only `\.`, CRs inside quoted fields of a
 * CRLF file, a last record without its newline, and values after the File source's inference
 * sample that a sink would otherwise round (`1.5` into an integer) or cut (a time into a date).
 */
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { query } from './support/duckdb.js'
import { pgSchemaPerTest, postgresSink, syncFiles } from './support/file-sync.js'
import { type Project, project } from './support/project.js'

/** More than the File source's 256 KiB sample, so that the last rows are read after it. */
const SAMPLED_ROWS = 20_000

const { admin, name: schemaName } = pgSchemaPerTest('skippr_csv')
let p: Project

/** The rows each file holds, as [id, text, n, day] with day as seconds since 1970 UTC. */
const NOTES: [number, string][] = [
  [1, `37°36'37.8"N`],
  [2, 'a"b'],
  [3, '\\.'],
  [4, 'two\r\nlines'],
  [5, 'cr\ronly'],
  [6, ''],
  [7, 'last, without newline'],
]

beforeEach(async () => {
  p = await project()
  // CRLF record ends; the fields as real exports write them.
  await p.write(
    'notes.csv',
    [
      'id,note',
      // First: a CR in the first record is where a reader guessing the line end goes wrong.
      '4,"two\r\nlines"',
      `1,37°36'37.8"N`,
      '2,a"b',
      '3,\\.',
      '5,"cr\ronly"',
      '6,""',
      '7,"last, without newline"',
    ].join('\r\n'),
  )
  const sampled = Array.from({ length: SAMPLED_ROWS }, (_, i) => `${i},2020-01-01\n`).join('')
  await p.write('drift.csv', `id,day\n${sampled}1.5,2020-01-02\n-1,2020-01-02 10:30:00\n`)
})
afterEach(async () => {
  await p.remove()
})

const sync = (sink: string) =>
  syncFiles(
    p,
    { notes: 'path: notes.csv, format: csv, settle_seconds: 0', drift: 'path: drift.csv, format: csv' },
    sink,
    { notes: NOTES.length, drift: SAMPLED_ROWS + 2 },
  )

/** The late rows of drift.csv: the column types widened, the values as written. */
const LATE = [
  { id: -1, day: 1577961000 },
  { id: 1.5, day: 1577923200 },
]

describe('CSV, values exact', () => {
  it('into PostgreSQL', async () => {
    const schema = schemaName()
    await sync(postgresSink(schema))
    const notes = await admin.query(`SELECT id, note FROM "${schema}".notes ORDER BY id`)
    expect(notes.rows.map((r) => [Number(r.id), r.note])).toEqual(NOTES)
    const late = await admin.query(
      `SELECT id, extract(epoch FROM day)::float8 AS day FROM "${schema}".drift WHERE id IN (-1, 1.5) ORDER BY id`,
    )
    expect(late.rows).toEqual(LATE)
    const { rows: count } = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".drift`)
    expect(count).toEqual([{ n: SAMPLED_ROWS + 2 }])
  })

  it('into DuckDB', async () => {
    await sync('Duckdb: { path: ./warehouse.duckdb }')
    const file = path.join(p.dir, 'warehouse.duckdb')
    const notes = await query(file, 'SELECT id, note FROM main.notes ORDER BY id')
    expect(notes.map((r) => [Number(r.id), r.note])).toEqual(NOTES)
    const late = await query(
      file,
      'SELECT id, epoch(day) AS day FROM main.drift WHERE id IN (-1, 1.5) ORDER BY id',
    )
    expect(late).toEqual(LATE)
    expect(await query(file, 'SELECT count(*)::INT AS n FROM main.drift')).toEqual([{ n: SAMPLED_ROWS + 2 }])
  })
})
