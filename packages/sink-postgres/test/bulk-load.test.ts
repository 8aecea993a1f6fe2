import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { allTypesSchema, makeBatch, trickyRows } from '@skippr/conformance'
import { BATCHES_TABLE, type BulkLoad, FENCES_TABLE, silentLogger } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sink as definition } from '../src/index.js'
import { freshSchema, PG_URL, type TestDb } from './db.js'

const CSV = [
  'id,name,qty,price,active,day,at,doc,note',
  '1,"a, b",3,1.5,true,2024-02-29,2024-03-01T12:00:00Z,"{""k"":1}",',
  '2,,-7,-0.25,false,1970-01-01,1999-12-31T23:59:59.5+02:00,[],x',
  '',
].join('\n')

let db: TestDb
let dir: string
let csvFile: string
let bulk: BulkLoad

beforeEach(async () => {
  db = await freshSchema()
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-pg-bulk-'))
  csvFile = path.join(dir, 'rows.csv')
  await writeFile(csvFile, CSV)
  bulk = await definition.bulkLoad!(
    { connection_string: PG_URL, schema: db.schema, concurrent_writes: 2 },
    { configDir: dir, dataDir: dir, pipeline: 'bench', logger: silentLogger },
  )
})
afterEach(async () => {
  await bulk.close()
  await db.drop()
  await rm(dir, { recursive: true, force: true })
})

const columnTypes = async (table: string) =>
  (
    await db.sql(
      `SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [db.schema, table],
    )
  ).rows

describe('the PostgreSQL bulk load', () => {
  it("COPYs every record of the file into a table typed as the sink's own, and says how many", async () => {
    expect(await bulk.load('loaded', allTypesSchema('loaded'), csvFile)).toBe(2)

    await db.sink().prepare(allTypesSchema('prepared'))
    expect(await columnTypes('loaded')).toEqual(await columnTypes('prepared'))
    const { rows } = await db.sql(
      `SELECT id::text, name, qty, price, active, day, at::text AS at, doc, note FROM "${db.schema}".loaded ORDER BY id`,
    )
    expect(rows).toEqual([
      {
        id: '1',
        name: 'a, b',
        qty: 3,
        price: 1.5,
        active: true,
        day: '2024-02-29',
        at: '2024-03-01 12:00:00+00',
        doc: { k: 1 },
        note: null,
      },
      {
        id: '2',
        name: null,
        qty: -7,
        price: -0.25,
        active: false,
        day: '1970-01-01',
        at: '1999-12-31 21:59:59.5+00',
        doc: [],
        note: 'x',
      },
    ])
  })

  it('drops the table, and a table that is not there', async () => {
    await bulk.load('loaded', allTypesSchema('loaded'), csvFile)
    await bulk.drop('loaded')
    await bulk.drop('loaded')
    expect(await db.rows('loaded')).toEqual([])
    expect(
      (await db.sql('SELECT to_regclass($1) AS found', [`"${db.schema}".loaded`])).rows[0]?.found,
    ).toBeNull()
  })

  it("forgets a pipeline's landed batches and fence, and no other pipeline's", async () => {
    const sink = db.sink()
    for (const pipeline of ['measured', 'kept'])
      await expect(
        sink.write(
          makeBatch({
            pipeline,
            seq: 1,
            parts: [{ schema: allTypesSchema('t'), format: 'csv', rows: trickyRows().slice(0, 1) }],
          }),
        ),
      ).resolves.toMatchObject({ status: 'landed' })

    await bulk.forgetPipeline('measured')

    for (const table of [BATCHES_TABLE, FENCES_TABLE])
      expect((await db.rows(table)).map((row) => row.pipeline)).toEqual(['kept'])
  })
})
