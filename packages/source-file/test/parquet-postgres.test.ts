/**
 * Parquet values that ISO text cannot carry to the sinks as they are — dates and timestamps outside
 * years 1 to 9999, infinity, a leading U+FEFF — passed on by the File source and landed in
 * PostgreSQL with COPY, as the PostgreSQL sink loads the contract's CSV.
 */
import { execFile, spawn } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { DuckDBInstance } from '@duckdb/node-api'
import type { SourceChunk } from '@skippr/connector-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCsv } from '../src/csv.js'
import { fileSource, readChunks, tempDir } from './helpers.js'
import { int96s, PHYSICAL, REPETITION, writeOneColumnParquet } from './parquet-writer.js'

const run = promisify(execFile)
const database = `skippr_file_parquet_${process.pid}_${Date.now()}`

/** psql on `db` (trust auth), failing on the first error; `input` is its stdin, for `\copy … FROM pstdin`. */
function psql(db: string, sql: string, input?: Uint8Array): Promise<string> {
  const args = ['-h', '127.0.0.1', '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql]
  if (input === undefined) return run('psql', args).then(({ stdout }) => stdout)
  return new Promise((resolve, reject) => {
    const child = spawn('psql', args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (data: Buffer) => {
      stdout += data.toString()
    })
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`psql: ${stderr}`))))
    child.stdin.end(input)
  })
}

let duck: Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>
beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect()
  await psql('postgres', `CREATE DATABASE ${database}`)
})
afterAll(async () => {
  duck.closeSync()
  await psql('postgres', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
})

async function query(sql: string): Promise<(string | null)[][]> {
  return (await duck.runAndReadAll(sql)).getRowsJS() as (string | null)[][]
}

/** The source's whole output for one file, as bytes: a leading U+FEFF of the body is kept. */
async function bodyOf(dir: string, name: string): Promise<Uint8Array> {
  const chunks: SourceChunk[] = await readChunks(fileSource(dir, { path: name, format: 'parquet' }))
  return Buffer.concat(chunks.map((c) => c.body))
}

const fieldsOf = (body: Uint8Array) =>
  parseCsv(new TextDecoder('utf-8', { ignoreBOM: true }).decode(body), Number.POSITIVE_INFINITY).map(
    (record) => record.fields,
  )

/** Lands `body` in a fresh table of `columns` with COPY … (FORMAT csv), as the PostgreSQL sink does. */
async function landInPostgres(table: string, columns: string, body: Uint8Array): Promise<void> {
  await psql(database, `CREATE TABLE ${table} (${columns})`)
  await psql(database, `\\copy ${table} FROM pstdin WITH (FORMAT csv)`, body)
}

const rowsOf = (stdout: string) => stdout.trimEnd().split('\n')

/** Days since 1970 of a date, or its infinity: how both databases are compared, free of formatting. */
const daysOf = (column: string) =>
  `CASE WHEN isfinite(${column}) THEN (${column} - DATE '1970-01-01')::text ELSE ${column}::text END`

describe('File source: Parquet dates and timestamps outside years 1 to 9999, landed in PostgreSQL', () => {
  it("passes them on in the contract's forms, top level and nested, and PostgreSQL lands each as DuckDB wrote it", async () => {
    const dir = await tempDir()
    const file = join(dir, 'far.parquet')
    await duck.run(`COPY (SELECT i, dt, ts, {'dt': dt, 'ts': ts} AS nested FROM (VALUES
        (1, DATE '4713-01-01 (BC)', TIMESTAMPTZ '4713-01-01 (BC) 00:00:00+00'),
        (2, DATE '0044-03-15 (BC)', TIMESTAMPTZ '0044-03-15 (BC) 10:00:00+00'),
        (3, DATE '0001-12-31 (BC)', TIMESTAMPTZ '0001-12-31 (BC) 23:59:59.999999+00'),
        (4, DATE '0001-01-01', TIMESTAMPTZ '0001-01-01 00:00:00+00'),
        (5, DATE '9999-12-31', TIMESTAMPTZ '9999-12-31 23:59:59.999999+00'),
        (6, DATE '10000-01-01', TIMESTAMPTZ '12345-06-07 08:09:10+00'),
        (7, DATE '5874897-12-31', TIMESTAMPTZ '294246-12-31 23:59:59.999999+00'),
        (8, DATE 'infinity', TIMESTAMPTZ 'infinity'),
        (9, DATE '-infinity', TIMESTAMPTZ '-infinity'),
        (10, NULL, NULL)) t(i, dt, ts)) TO '${file}' (FORMAT parquet)`)
    const body = await bodyOf(dir, 'far.parquet')
    expect(fieldsOf(body).map((r) => r.slice(0, 3))).toEqual([
      ['1', '4713-01-01 (BC)', '4713-01-01 (BC) 00:00:00.000000Z'],
      ['2', '0044-03-15 (BC)', '0044-03-15 (BC) 10:00:00.000000Z'],
      ['3', '0001-12-31 (BC)', '0001-12-31 (BC) 23:59:59.999999Z'],
      ['4', '0001-01-01', '0001-01-01T00:00:00.000000Z'],
      ['5', '9999-12-31', '9999-12-31T23:59:59.999999Z'],
      ['6', '10000-01-01', '12345-06-07T08:09:10.000000Z'],
      ['7', '5874897-12-31', '294246-12-31T23:59:59.999999Z'],
      ['8', 'infinity', 'infinity'],
      ['9', '-infinity', '-infinity'],
      ['10', null, null],
    ])
    expect(fieldsOf(body)[1]?.[3]).toBe('{"dt":"0044-03-15 (BC)","ts":"0044-03-15 (BC) 10:00:00.000000Z"}')

    await landInPostgres('far', 'i int, dt date, ts timestamptz, nested jsonb', body)
    const micros = (ts: string) =>
      `CASE WHEN isfinite(${ts}) THEN (extract(epoch FROM ${ts}) * 1000000)::numeric(40, 0)::text ELSE ${ts}::text END`
    const landed = await psql(
      database,
      `SELECT i, ${daysOf('dt')}, ${micros('ts')}, ${daysOf("(nested->>'dt')::date")},
        ${micros("(nested->>'ts')::timestamptz")} FROM far ORDER BY i`,
    )
    const written = await query(
      `SELECT i::VARCHAR, ${daysOf('dt')}, CASE WHEN isfinite(ts) THEN epoch_us(ts)::VARCHAR ELSE ts::VARCHAR END
       FROM read_parquet('${file}') ORDER BY i`,
    )
    // Each value twice: top level, and cast back from inside the JSON.
    expect(rowsOf(landed)).toEqual(
      written.map(([i, dt, ts]) => [i, dt, ts, dt, ts].map((v) => v ?? '').join('|')),
    )
  })

  it('passes INT96 timestamps of years 290000 and 294270 on, and PostgreSQL (up to 294276 AD) lands them', async () => {
    const dir = await tempDir()
    const julianDay = (year: number) => 2_440_588 + Math.floor((year - 1970) * 365.2425)
    const values = [
      { julianDay: 2_440_588, nanosOfDay: 1_234_567_000n },
      { julianDay: julianDay(2024), nanosOfDay: 86_399_999_999_000n },
      { julianDay: julianDay(290_000), nanosOfDay: 12_345_678_912_000n },
      // Past DuckDB's 294247 AD: its sink refuses it, naming column and value (see its tests).
      { julianDay: julianDay(294_270), nanosOfDay: 0n },
    ]
    await writeOneColumnParquet(join(dir, 'spark.parquet'), {
      column: { name: 'ts', repetition: REPETITION.OPTIONAL, type: PHYSICAL.INT96 },
      repetitionLevels: [],
      definitionLevels: [1, 1, 1, 1],
      values: int96s(values),
      rows: 4,
    })
    const body = await bodyOf(dir, 'spark.parquet')
    expect(fieldsOf(body)).toEqual([
      ['1970-01-01T00:00:01.234567Z'],
      [expect.stringMatching(/^2024-\d\d-\d\dT23:59:59\.999999Z$/)],
      [expect.stringMatching(/^290000-\d\d-\d\dT03:25:45\.678912Z$/)],
      ['294269-12-31T00:00:00.000000Z'],
    ])
    await landInPostgres('spark', 'ts timestamptz', body)
    const landed = await psql(
      database,
      'SELECT (extract(epoch FROM ts) * 1000000)::numeric(40, 0) FROM spark',
    )
    const micros = values.map((v) => BigInt(v.julianDay - 2_440_588) * 86_400_000_000n + v.nanosOfDay / 1000n)
    expect(rowsOf(landed)).toEqual(micros.map(String))
  })
})

describe('File source: Parquet text with a leading U+FEFF, landed in PostgreSQL', () => {
  it('keeps the U+FEFF, first in the body, alone and inside nested values', async () => {
    const dir = await tempDir()
    const file = join(dir, 'bom.parquet')
    await duck.run(`COPY (SELECT * FROM (VALUES
        (chr(65279) || 'bom', [chr(65279) || 'x']),
        (chr(65279), [chr(65279)]),
        ('plain', NULL)) t(s, l)) TO '${file}' (FORMAT parquet)`)
    const body = await bodyOf(dir, 'bom.parquet')
    expect(fieldsOf(body)).toEqual([
      ['\uFEFFbom', '["\uFEFFx"]'],
      ['\uFEFF', '["\uFEFF"]'],
      ['plain', null],
    ])
    await landInPostgres('bom', 's text, l jsonb', body)
    const landed = await psql(
      database,
      `SELECT encode(convert_to(s || '|' || coalesce(l->>0, 'NULL'), 'UTF8'), 'hex') FROM bom`,
    )
    const hex = (text: string) => Buffer.from(text).toString('hex')
    expect(rowsOf(landed)).toEqual([hex('\uFEFFbom|\uFEFFx'), hex('\uFEFF|\uFEFF'), hex('plain|NULL')])
  })
})
