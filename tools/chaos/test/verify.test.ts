/**
 * The check must catch what exactly-once forbids: a duplicate, a lost row, a row the source never
 * generated, a changed value. Each case lands the Sample rows directly, breaks one, and expects the
 * problem named.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { bikehireRows, writeBikehireFile } from '@skippr/source-sample'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type Destination, duckdbDestination, postgresDestination, verifyExactlyOnce } from '../src/index.js'

const ROWS = 300
const SEED = 3
const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

async function landDuckdb(destination: Destination, dir: string): Promise<void> {
  const csv = path.join(dir, 'rentals.csv')
  await writeBikehireFile(csv, { rows: ROWS, seed: SEED, format: 'csv' })
  await destination.query(`CREATE TABLE ${destination.table} AS SELECT * FROM read_csv('${csv}')`)
}

async function landPostgres(destination: Destination): Promise<void> {
  const [schema] = destination.table.split('.')
  await destination.query(`CREATE SCHEMA ${schema}`)
  await destination.query(
    `CREATE TABLE ${destination.table} (rental_id bigint, bike_id integer, start_station integer,
       end_station integer, start_time timestamptz, end_time timestamptz, duration_s integer,
       member_type text, distance_km double precision)`,
  )
  const rows = JSON.stringify(bikehireRows(SEED, 0, ROWS)).replaceAll("'", "''")
  await destination.query(
    `INSERT INTO ${destination.table} SELECT * FROM json_populate_recordset(NULL::${destination.table}, '${rows}')`,
  )
}

describe.each(['duckdb', 'postgres'] as const)('verifyExactlyOnce on %s', (sink) => {
  let dir: string
  let destination: Destination
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'skippr-chaos-verify-'))
    destination = sink === 'duckdb' ? duckdbDestination(dir) : postgresDestination(PG_URL)
    await (sink === 'duckdb' ? landDuckdb(destination, dir) : landPostgres(destination))
  })
  afterEach(async () => {
    await destination.dispose({ keep: false })
    await rm(dir, { recursive: true, force: true })
  })
  const t = () => destination.table
  const verify = () => verifyExactlyOnce(destination, { rows: ROWS, seed: SEED })

  test('passes when every source row is there once', async () => {
    expect(await verify()).toEqual([])
  })

  test('names a duplicate', async () => {
    await destination.query(`INSERT INTO ${t()} SELECT * FROM ${t()} WHERE rental_id = 7`)
    expect(await verify()).toEqual([
      `${ROWS + 1} rows landed, the source has ${ROWS}`,
      '1 duplicate rows: rental_id 7 ×2',
    ])
  })

  test('names a missing row', async () => {
    await destination.query(`DELETE FROM ${t()} WHERE rental_id = 9`)
    expect(await verify()).toEqual([
      `${ROWS - 1} rows landed, the source has ${ROWS}`,
      '1 source rows missing: rental_id 9',
    ])
  })

  test('names a row the source never generated', async () => {
    await destination.query(`UPDATE ${t()} SET rental_id = ${ROWS + 50} WHERE rental_id = 3`)
    expect(await verify()).toEqual([
      '1 source rows missing: rental_id 3',
      '1 rental_id values the source never generated',
    ])
  })

  test('names a changed value', async () => {
    const [row] = bikehireRows(SEED, 4, 1)
    await destination.query(`UPDATE ${t()} SET end_station = end_station + 1 WHERE rental_id = 5`)
    expect(await verify()).toEqual([
      `rental_id 5: end_station is ${row!.end_station + 1}, the source has ${row!.end_station}`,
    ])
  })

  test('names a missing table', async () => {
    await destination.query(`DROP TABLE ${t()}`)
    const problems = await verify()
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^cannot read .*rentals/)
  })
})
