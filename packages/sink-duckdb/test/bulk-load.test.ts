import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { allTypesSchema, makeBatch, trickyRows } from '@skippr/conformance'
import { BATCHES_TABLE, type BulkLoad, FENCES_TABLE, silentLogger } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sink as definition } from '../src/index.js'
import { query, readTable, type TempWarehouse, tempWarehouse } from './helpers.js'

const SCHEMA = 'bench'
const CSV = [
  'id,name,qty,price,active,day,at,doc,note',
  '1,"a, b",3,1.5,true,2024-02-29,2024-03-01T12:00:00Z,"{""k"":1}",',
  '2,,-7,-0.25,false,1970-01-01,1999-12-31T23:59:59.5+02:00,[],x',
  '',
].join('\n')

let warehouse: TempWarehouse
let bulk: BulkLoad
let csvFile: string

beforeEach(async () => {
  warehouse = await tempWarehouse()
  csvFile = path.join(warehouse.dir, 'rows.csv')
  await writeFile(csvFile, CSV)
  bulk = await definition.bulkLoad!(
    { path: 'warehouse.duckdb', schema: SCHEMA },
    { configDir: warehouse.dir, dataDir: warehouse.dir, pipeline: 'bench', logger: silentLogger },
  )
})
afterEach(async () => {
  await bulk.close()
  await rm(warehouse.dir, { recursive: true, force: true })
})

const columnTypes = (table: string) =>
  query(
    warehouse.file,
    'SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = $1 AND table_name = $2 ORDER BY column_index',
    [SCHEMA, table],
  )

describe('the DuckDB bulk load', () => {
  it("loads every record of the file into a table typed as the sink's own, and says how many", async () => {
    expect(await bulk.load('loaded', allTypesSchema('loaded'), csvFile)).toBe(2)

    const sink = warehouse.sink(SCHEMA)
    await sink.prepare(allTypesSchema('prepared'))
    await sink.close()
    expect(await columnTypes('loaded')).toEqual(await columnTypes('prepared'))
    const rows = await query(warehouse.file, `SELECT * FROM ${SCHEMA}.loaded ORDER BY id`)
    expect(rows[0]).toMatchObject({ id: 1n, name: 'a, b', qty: 3, price: 1.5, active: true, note: null })
    expect(rows[1]).toMatchObject({ id: 2n, name: null, qty: -7, active: false, note: 'x' })
    expect(
      await query(warehouse.file, `SELECT CAST("at" AS VARCHAR) AS "at" FROM ${SCHEMA}.loaded ORDER BY id`),
    ).toEqual([{ at: '2024-03-01 12:00:00+00' }, { at: '1999-12-31 21:59:59.5+00' }])
  })

  it('drops the table, and a table that is not there', async () => {
    await bulk.load('loaded', allTypesSchema('loaded'), csvFile)
    await bulk.drop('loaded')
    await bulk.drop('loaded')
    expect(
      await query(warehouse.file, 'SELECT table_name FROM duckdb_tables() WHERE schema_name = $1', [SCHEMA]),
    ).toEqual([])
  })

  it("forgets a pipeline's landed batches and fence, and no other pipeline's", async () => {
    const sink = warehouse.sink(SCHEMA)
    await sink.prepare(allTypesSchema('t'))
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
    await sink.close()

    await bulk.forgetPipeline('measured')

    for (const table of [BATCHES_TABLE, FENCES_TABLE])
      expect((await readTable(warehouse.file, SCHEMA, table)).map((row) => row.pipeline)).toEqual(['kept'])
  })
})
