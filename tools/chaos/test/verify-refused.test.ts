/**
 * The `--refused` check must catch what exactly-once with deadletters forbids: a row lost, a good
 * row twice or set aside, a bad row landed or set aside twice, a row in both tables, a deadletter
 * that is not its line's, a changed value. Each case lands the file's rows where they belong
 * directly (good ones in the data table, bad ones as the deadletters skipprd writes), breaks one,
 * and expects the problem named.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type BadKind,
  badKindOf,
  createRefusingTable,
  csvLine,
  type Destination,
  duckdbDestination,
  expectedRecord,
  FILE_FIELDS,
  FILE_NAME,
  type FileRow,
  fileRows,
  postgresDestination,
  REFUSED_SINKS,
  type RowPlan,
  rowPlan,
  SOURCE_KINDS,
  verifyRefused,
} from '../src/index.js'

const ROWS = 400
const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const DL = '_dl_chaos'

const literal = (value: unknown): string =>
  typeof value === 'number' ? String(value) : `'${String(value).replaceAll("'", "''")}'`

function dataValues(row: FileRow): string {
  return `(${FILE_FIELDS.map((f) => literal(row[f.name as keyof FileRow])).join(', ')})`
}

/** The deadletter skipprd writes for a bad row: its line for the source's, its batch for the destination's. */
function deadletterValues(row: FileRow): string {
  const fromSource = SOURCE_KINDS.includes(row.kind!)
  const values = [
    expectedRecord(csvLine(row)),
    'rentals',
    `refused: ${row.kind}`,
    fromSource ? 'SKIPPR_FILE_BAD_RECORD' : '23514',
    fromSource ? FILE_NAME : null,
    fromSource ? 'line' : 'batch chaos/e/000000000001 row',
    fromSource ? row.rental_id + 1 : 0,
  ]
  return `(${values.map((v) => (v === null ? 'NULL' : literal(v))).join(', ')})`
}

async function land(destination: Destination, plan: RowPlan): Promise<void> {
  const rows = fileRows(plan, 0, ROWS)
  await createRefusingTable(destination)
  const good = rows.filter((r) => r.kind === undefined)
  await destination.query(`INSERT INTO ${destination.table} VALUES ${good.map(dataValues).join(', ')}`)
  await destination.query(
    `CREATE TABLE ${destination.qualify(DL)} (record text, namespace text, error text, failure_code text,
       source_uri text, offset_key text, offset_pos bigint)`,
  )
  const bad = rows.filter((r) => r.kind !== undefined)
  await destination.query(
    `INSERT INTO ${destination.qualify(DL)} VALUES ${bad.map(deadletterValues).join(', ')}`,
  )
}

describe.each(REFUSED_SINKS)('verifyRefused on %s', (sink) => {
  const plan = rowPlan(11, 0.1, sink)
  let dir: string
  let destination: Destination
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'skippr-chaos-verify-refused-'))
    destination = sink === 'duckdb' ? duckdbDestination(dir) : postgresDestination(PG_URL)
    await land(destination, plan)
  })
  afterEach(async () => {
    await destination.dispose({ keep: false })
    await rm(dir, { recursive: true, force: true })
  })
  const verify = () => verifyRefused(destination, { rows: ROWS, plan, deadletterTable: DL })
  const t = () => destination.table
  const dl = () => destination.qualify(DL)
  /** The first rental_id of a kind (undefined: a good row). */
  const firstOf = (kind: BadKind | undefined, after = 0): number => {
    for (let id = after + 1; id <= ROWS; id++) if (badKindOf(plan, id) === kind) return id
    throw new Error(`no ${kind ?? 'good'} row in ${ROWS}`)
  }
  const row = (id: number): FileRow => fileRows(plan, id - 1, 1)[0]!
  const deleteDeadletter = (id: number) =>
    destination.query(`DELETE FROM ${dl()} WHERE record LIKE '${id},%'`)

  test('passes when every good row is in the table once and every bad one in the deadletters once', async () => {
    const { problems, counts } = await verify()
    expect(problems).toEqual([])
    const bad = Object.values(counts.refusedByKind).reduce((sum, n) => sum + n, 0)
    expect(counts).toMatchObject({ landed: counts.good, deadletters: bad })
    expect(counts.good + bad).toBe(ROWS)
    for (const kind of plan.kinds) expect(counts.refusedByKind[kind]).toBeGreaterThan(0)
  })

  test('names a good row lost', async () => {
    const id = firstOf(undefined)
    await destination.query(`DELETE FROM ${t()} WHERE rental_id = ${id}`)
    expect((await verify()).problems).toEqual([
      `1 rows neither in ${t()} nor in ${DL}: rental_id ${id} (good)`,
    ])
  })

  test('names a refused row lost', async () => {
    const id = firstOf('far-future')
    await deleteDeadletter(id)
    expect((await verify()).problems).toEqual([
      `1 rows neither in ${t()} nor in ${DL}: rental_id ${id} (far-future)`,
    ])
  })

  test('names a good row landed twice', async () => {
    const id = firstOf(undefined)
    await destination.query(`INSERT INTO ${t()} SELECT * FROM ${t()} WHERE rental_id = ${id}`)
    expect((await verify()).problems).toEqual([`1 good rows more than once in ${t()}: rental_id ${id} ×2`])
  })

  test('names a refused row that landed in the table instead', async () => {
    const id = firstOf('not-utf8')
    await deleteDeadletter(id)
    await destination.query(`INSERT INTO ${t()} VALUES ${dataValues(row(id))}`)
    expect((await verify()).problems).toEqual([
      `1 refused rows in ${t()} instead of ${DL}: rental_id ${id} (not-utf8)`,
    ])
  })

  test('names a good row set aside instead', async () => {
    const id = firstOf(undefined)
    await destination.query(`DELETE FROM ${t()} WHERE rental_id = ${id}`)
    await destination.query(`INSERT INTO ${dl()} VALUES ${deadletterValues({ ...row(id), kind: 'check' })}`)
    expect((await verify()).problems).toEqual([`1 good rows in ${DL} instead of ${t()}: rental_id ${id}`])
  })

  test('names a row in both tables', async () => {
    const id = firstOf(undefined)
    await destination.query(`INSERT INTO ${dl()} VALUES ${deadletterValues({ ...row(id), kind: 'check' })}`)
    expect((await verify()).problems).toEqual([`1 rows in both ${t()} and ${DL}: rental_id ${id}`])
  })

  test('names a deadletter written twice', async () => {
    const id = firstOf('nul')
    await destination.query(`INSERT INTO ${dl()} SELECT * FROM ${dl()} WHERE record LIKE '${id},%'`)
    expect((await verify()).problems).toEqual([`1 refused rows more than once in ${DL}: rental_id ${id} ×2`])
  })

  test("names a deadletter at another line than its record's", async () => {
    const id = firstOf('nul')
    await destination.query(`UPDATE ${dl()} SET offset_pos = offset_pos + 1 WHERE record LIKE '${id},%'`)
    expect((await verify()).problems).toEqual([
      `1 deadletters that do not match their line: rental_id ${id} (nul): offset is line ${id + 2}, the record is on line ${id + 1}`,
    ])
  })

  test('names a deadletter whose record is not its line', async () => {
    const id = firstOf('far-future')
    await destination.query(`UPDATE ${dl()} SET record = record || 'x' WHERE record LIKE '${id},%'`)
    const record = expectedRecord(csvLine(row(id)))
    expect((await verify()).problems).toEqual([
      `1 deadletters that do not match their line: rental_id ${id} (far-future): record is ${JSON.stringify(`${record}x`)}, the line is ${JSON.stringify(record)}`,
    ])
  })

  test('names a deadletter no line of the file holds', async () => {
    await destination.query(
      `INSERT INTO ${dl()} VALUES ('${ROWS + 7},x', 'rentals', 'e', 'c', NULL, 'batch b row', 0)`,
    )
    expect((await verify()).problems).toEqual([
      `1 deadletters in ${DL} that no line of the file holds: ${JSON.stringify(`${ROWS + 7},x`)}`,
    ])
  })

  test('names a changed value', async () => {
    const id = firstOf(undefined)
    await destination.query(`UPDATE ${t()} SET note = 'changed' WHERE rental_id = ${id}`)
    expect((await verify()).problems).toEqual([
      `1 good rows landed with other values than the file's: rental_id ${id}: note is changed, the file has ok ${id}`,
    ])
  })

  test('names a missing deadletter table', async () => {
    await destination.query(`DROP TABLE ${dl()}`)
    const { problems } = await verify()
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^cannot read .*_dl_chaos.* in /)
  })
})
