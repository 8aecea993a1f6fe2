/**
 * The at-least-once check must pass copies a retry may make and catch what it may not: a row
 * under two part keys, a part copied only in part (where a copy is a whole part), a message id
 * naming two rows (where a copy is one message), and what exactly once forbids after removing
 * the copies. Each case lands the Sample rows tagged with part keys in DuckDB, then changes them.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { writeBikehireFile } from '@skippr/source-sample'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type Destination, duckdbDestination, verifyOnceAfterCopies } from '../src/index.js'

const ROWS = 300
const SEED = 5

describe('verifyOnceAfterCopies', () => {
  let dir: string
  let duckdb: Destination
  const t = () => duckdb.table
  const verify = (retriesCopy: Destination['retriesCopy']) =>
    verifyOnceAfterCopies({ ...duckdb, retriesCopy }, { rows: ROWS, seed: SEED })

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'skippr-chaos-copies-'))
    duckdb = duckdbDestination(dir)
    const csv = path.join(dir, 'rentals.csv')
    await writeBikehireFile(csv, { rows: ROWS, seed: SEED, format: 'csv' })
    // Parts of 100 rows; a message id is the part key and the row's place in it.
    await duckdb.query(
      `CREATE TABLE ${t()} AS SELECT *, 'p/e/' || ((rental_id - 1) // 100) || '/0' AS _skippr_batch,
         'p/e/' || ((rental_id - 1) // 100) || '/0:' || ((rental_id - 1) % 100) AS _skippr_message
       FROM read_csv('${csv}')`,
    )
  })
  afterEach(async () => {
    await duckdb.dispose({ keep: false })
    await rm(dir, { recursive: true, force: true })
  })

  test('passes rows landed once, and counts no copies', async () => {
    expect(await verify('parts')).toEqual({ problems: [], extraCopies: 0 })
  })

  test('passes a whole part landed again, and counts its rows', async () => {
    await duckdb.query(`INSERT INTO ${t()} SELECT * FROM ${t()} WHERE _skippr_batch = 'p/e/1/0'`)
    expect(await verify('parts')).toEqual({ problems: [], extraCopies: 100 })
  })

  test('where a copy is a whole part, names a part copied in part', async () => {
    await duckdb.query(`INSERT INTO ${t()} SELECT * FROM ${t()} WHERE rental_id BETWEEN 101 AND 110`)
    const { problems } = await verify('parts')
    expect(problems).toEqual(['part copies that are not whole: p/e/1/0 (rows ×1 to ×2)'])
  })

  test('where a copy is one message, passes a part copied in part', async () => {
    await duckdb.query(`INSERT INTO ${t()} SELECT * FROM ${t()} WHERE rental_id BETWEEN 101 AND 110`)
    expect(await verify('messages')).toEqual({ problems: [], extraCopies: 10 })
  })

  test('where a copy is one message, names a message id that names two rows', async () => {
    await duckdb.query(
      `INSERT INTO ${t()} SELECT * REPLACE (rental_id + 1 AS rental_id) FROM ${t()} WHERE rental_id = 150`,
    )
    const { problems } = await verify('messages')
    expect(problems).toContain('message ids naming more than one row: p/e/1/0:49 (2 rows)')
  })

  test('names a row landed by two batches', async () => {
    await duckdb.query(
      `INSERT INTO ${t()} SELECT * REPLACE ('p/e/9/0' AS _skippr_batch) FROM ${t()} WHERE rental_id = 7`,
    )
    const { problems } = await verify('messages')
    expect(problems[0]).toBe('rows under more than one part key (landed by two batches): rental_id 7 ×2')
  })

  test('names a row missing from every copy', async () => {
    await duckdb.query(`DELETE FROM ${t()} WHERE rental_id = 42`)
    const { problems } = await verify('parts')
    expect(problems.join('\n')).toMatch(/rental_id 42/)
  })
})
