import { execFile } from 'node:child_process'
import { createReadStream } from 'node:fs'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { DuckDBInstance } from '@duckdb/node-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIKEHIRE_CSV_HEADER, BikehireEncoder, bikehireRows } from '../src/bikehire.js'
import { writeBikehireFile } from '../src/file.js'

const run = promisify(execFile)
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skippr-sample-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('writeBikehireFile', () => {
  it('writes CSV with a header row, then the rows the source emits', async () => {
    const path = join(dir, 'small.csv')
    await writeBikehireFile(path, { rows: 45_000, seed: 3, format: 'csv' })
    const expected = BIKEHIRE_CSV_HEADER + decode(new BikehireEncoder(3, 'csv').encode(0, 45_000))
    expect(await readFile(path, 'utf8')).toBe(expected)
  })

  it('writes CSV without a header when asked, and replaces an existing file', async () => {
    const path = join(dir, 'plain.csv')
    await writeBikehireFile(path, { rows: 500, format: 'csv' })
    await writeBikehireFile(path, { rows: 10, format: 'csv', header: false })
    expect(await readFile(path, 'utf8')).toBe(decode(new BikehireEncoder(1, 'csv').encode(0, 10)))
  })

  it('writes JSON lines', async () => {
    const path = join(dir, 'small.jsonl')
    await writeBikehireFile(path, { rows: 3000, seed: 8, format: 'jsonl' })
    const lines = (await readFile(path, 'utf8')).split('\n')
    expect(lines.pop()).toBe('')
    expect(lines.map((line) => JSON.parse(line))).toEqual(bikehireRows(8, 0, 3000))
  })

  it('streams 1,000,000 rows with flat memory', async () => {
    const path = join(dir, 'million.csv')
    const baseline = process.memoryUsage().rss
    let peak = baseline
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 5)
    await writeBikehireFile(path, { rows: 1_000_000, format: 'csv' })
    clearInterval(sampler)
    const { size } = await stat(path)
    // Holding the file in memory would cost its size at least; streaming keeps to about one block.
    expect(peak - baseline).toBeLessThan(size / 2)
    let count = 0
    let last = ''
    for await (const line of createInterface({ input: createReadStream(path) })) {
      count++
      last = line
    }
    expect(count).toBe(1_000_001)
    expect(`${last}\n`).toBe(decode(new BikehireEncoder(1, 'csv').encode(999_999, 1)))
    await rm(path)
  })
})

describe('files the databases read', () => {
  it('loads into DuckDB with read_csv and read_json, with the schema types', async () => {
    const csv = join(dir, 'duck.csv')
    const jsonl = join(dir, 'duck.jsonl')
    await writeBikehireFile(csv, { rows: 20_000, seed: 2, format: 'csv' })
    await writeBikehireFile(jsonl, { rows: 20_000, seed: 2, format: 'jsonl' })
    const db = await DuckDBInstance.create(':memory:')
    const connection = await db.connect()
    try {
      for (const [table, reader] of [
        ['from_csv', `read_csv('${csv}')`],
        ['from_json', `read_json('${jsonl}', format = 'newline_delimited')`],
      ]) {
        await connection.run(`CREATE TABLE ${table} AS SELECT * FROM ${reader}`)
        const types = await connection.runAndReadAll(
          `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '${table}' ORDER BY ordinal_position`,
        )
        expect(types.getRows().map(([name, type]) => `${name}:${type}`)).toEqual([
          'rental_id:BIGINT',
          'bike_id:BIGINT',
          'start_station:BIGINT',
          'end_station:BIGINT',
          expect.stringMatching(/^start_time:TIMESTAMP/),
          expect.stringMatching(/^end_time:TIMESTAMP/),
          'duration_s:BIGINT',
          'member_type:VARCHAR',
          'distance_km:DOUBLE',
        ])
      }
      const same = await connection.runAndReadAll(
        'SELECT count(*), count(DISTINCT rental_id), (SELECT count(*) FROM (SELECT * FROM from_csv EXCEPT SELECT * FROM from_json)) FROM from_csv',
      )
      expect(same.getRows()).toEqual([[20_000n, 20_000n, 0n]])
    } finally {
      connection.closeSync()
    }
  })

  it('loads into PostgreSQL with \\copy … CSV HEADER', async () => {
    const csv = join(dir, 'pg.csv')
    await writeBikehireFile(csv, { rows: 20_000, seed: 6, format: 'csv' })
    const schema = `skippr_sample_${process.pid}_${Date.now()}`
    const psql = (...args: string[]) =>
      run('psql', [
        '-h',
        '127.0.0.1',
        '-U',
        'postgres',
        '-d',
        'test',
        '-v',
        'ON_ERROR_STOP=1',
        '-qAt',
        ...args,
      ])
    await psql(
      '-c',
      `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.rentals (rental_id bigint PRIMARY KEY, bike_id int,
       start_station int, end_station int, start_time timestamptz, end_time timestamptz, duration_s int,
       member_type text, distance_km double precision)`,
    )
    try {
      await psql('-c', `\\copy ${schema}.rentals FROM '${csv}' WITH (FORMAT csv, HEADER true)`)
      const { stdout } = await psql(
        '-c',
        `SELECT count(*), sum(duration_s), bool_and(end_time - start_time = duration_s * interval '1 second')
         FROM ${schema}.rentals`,
      )
      const rows = bikehireRows(6, 0, 20_000)
      expect(stdout.trim()).toBe(`20000|${rows.reduce((sum, r) => sum + r.duration_s, 0)}|t`)
    } finally {
      await psql('-c', `DROP SCHEMA ${schema} CASCADE`)
    }
  })
})
