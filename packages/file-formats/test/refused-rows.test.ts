/**
 * Rows refused for a value the Parquet file cannot hold: every one found in one pass, named by its
 * part and by its record as connector-api's `recordRanges` counts them (the runner cuts them out by
 * those indexes), while a malformed part or a wrong row count still fails the file.
 */
import { createHash } from 'node:crypto'
import {
  BAD_RECORD,
  type Field,
  hasCode,
  ROW_COUNT_MISMATCH,
  recordRanges,
  withoutRecords,
} from '@skippr/connector-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Compression } from '../src/encoding.js'
import { encodeFile } from '../src/file-body.js'
import type { FilePart } from '../src/part-reader.js'
import { RECORDS_REFUSED, type RecordsRefusedError } from '../src/records-refused.js'
import { openParquetReader, type ParquetReader } from './read-parquet.js'

const WHERE = { target: 'file out/t/p-e-000000000001.parquet', batch: 'p/e/000000000001' }
const fields: Field[] = [
  { name: 'id', type: 'int' },
  { name: 'name', type: 'string' },
  { name: 'amount', type: 'double' },
  { name: 'seen', type: 'timestamp' },
  { name: 'ok', type: 'boolean' },
]

function part(format: 'csv' | 'jsonl', body: string, rows: number): FilePart {
  const schema = { namespace: 't', fields }
  return { namespace: 't', schemaVersion: 1, format, rows, body: new TextEncoder().encode(body), schema }
}

const parquet = (parts: readonly FilePart[], compression: Compression = 'none') =>
  encodeFile(parts, { format: 'parquet', compression }, WHERE)

async function rejection(run: Promise<unknown>): Promise<Error> {
  try {
    await run
  } catch (error) {
    return error as Error
  }
  throw new Error('nothing was thrown')
}

/** The record texts of a part, as `recordRanges` cuts its body. */
const records = (p: FilePart) =>
  recordRanges(p.body, p.format).map(([start, end]) => Buffer.from(p.body.subarray(start, end)).toString())

// Quoted newlines, a CRLF record end, a row with three bad values, a last line without its newline.
const CSV = part(
  'csv',
  '1,"two\nlines",1.5,2024-01-01T00:00:00Z,true\n' +
    'abc,"x",2.5,,false\n' +
    '3,"quoted ""and\nnewline""",one,2024-13-01T00:00:00Z,maybe\r\n' +
    '4,"d",,,\n' +
    '5,"e",,,yes',
  5,
)
// Blank lines (not records), a last line without its newline.
const JSONL = part(
  'jsonl',
  '{"id":6,"name":"f"}\n\n  \t\n' +
    '{"id":"7","name":"g"}\n' +
    '{"id":8,"seen":"2024-01-01T00:00:00.0000001Z"}\n\n' +
    '{"id":9,"ok":true}\n' +
    '{"id":10,"amount":"NaN"}',
  5,
)

let duckdb: ParquetReader
beforeAll(async () => {
  duckdb = await openParquetReader()
})
afterAll(async () => {
  await duckdb.close()
})

describe('encodeFile (parquet): rows with a value the file cannot hold', () => {
  it('refuses every such row of every part in one pass, by part and record, naming field and value', async () => {
    const error = await rejection(parquet([CSV, JSONL]))
    expect(hasCode(error, RECORDS_REFUSED)).toBe(true)
    const refusals = (error as RecordsRefusedError).refusals
    const message = (field: string, value: string, reason: string) =>
      `namespace t, field "${field}": ${value} ${reason}; the record does not match its schema, fix the source data`
    const int = 'is not an int (a whole number from -2147483648 to 2147483647)'
    const double = 'is not a double (a decimal number)'
    const finer = 'has digits finer than a microsecond, which a Parquet timestamp (MICROS) cannot hold'
    expect(refusals).toEqual([
      { part: 0, row: 1, code: BAD_RECORD, error: message('id', '"abc"', int) },
      // Three bad values: the row is refused once, for its first.
      { part: 0, row: 2, code: BAD_RECORD, error: message('amount', '"one"', double) },
      {
        part: 0,
        row: 4,
        code: BAD_RECORD,
        error: message('ok', '"yes"', 'is not a boolean (true or false)'),
      },
      { part: 1, row: 1, code: BAD_RECORD, error: message('id', '"7"', int) },
      { part: 1, row: 2, code: BAD_RECORD, error: message('seen', '"2024-01-01T00:00:00.0000001Z"', finer) },
      { part: 1, row: 4, code: BAD_RECORD, error: message('amount', '"NaN"', double) },
    ])
    // The indexes are recordRanges': the records they name are the bad ones.
    const parts = [CSV, JSONL]
    expect(refusals.map((r) => records(parts[r.part]!)[r.row])).toEqual([
      'abc,"x",2.5,,false',
      '3,"quoted ""and\nnewline""",one,2024-13-01T00:00:00Z,maybe\r',
      '5,"e",,,yes',
      '{"id":"7","name":"g"}',
      '{"id":8,"seen":"2024-01-01T00:00:00.0000001Z"}',
      '{"id":10,"amount":"NaN"}',
    ])
    expect(error.message).toBe(
      `${WHERE.target}, batch ${WHERE.batch}: 6 row(s) hold a value the file cannot hold, so nothing of it ` +
        `was written; the first is row 2 of part 1: ${refusals[0]?.error}`,
    )
  })

  it('encodes the rest once the refused records are cut out, as the runner writes the batch again', async () => {
    const error = (await rejection(parquet([CSV, JSONL]))) as RecordsRefusedError
    const rest = [CSV, JSONL].map((p, index) => {
      const rows = new Set(error.refusals.filter((r) => r.part === index).map((r) => r.row))
      return { ...p, body: withoutRecords(p.body, p.format, rows).body, rows: p.rows - rows.size }
    })
    const landed = await duckdb.query(
      await parquet(rest),
      (s) => `SELECT id, name, ok FROM ${s} ORDER BY file_row_number`,
    )
    expect(landed).toEqual([
      { id: 1, name: 'two\nlines', ok: true },
      { id: 4, name: 'd', ok: null },
      { id: 6, name: 'f', ok: null },
      { id: 9, name: null, ok: true },
    ])
  })

  it('finds refused rows on both sides of a row group boundary', async () => {
    const lines = Array.from({ length: 250_000 }, (_, i) => `${i},,,,`)
    lines[3] = '3,,1e999,,'
    lines[150_000] = '150000,,,,t'
    const error = await rejection(parquet([part('csv', `${lines.join('\n')}\n`, lines.length)]))
    expect((error as RecordsRefusedError).refusals.map((r) => [r.part, r.row])).toEqual([
      [0, 3],
      [0, 150_000],
    ])
  })

  it('still fails the file for a malformed record or a wrong row count after refused values', async () => {
    const malformed = part('csv', 'abc,,,,\n2,"never closed,,,,\n', 2)
    const error = await rejection(parquet([malformed]))
    expect(hasCode(error, BAD_RECORD)).toBe(true)
    expect(error.message).toContain('row 2 of part 1 has a quoted field that never closes')
    const miscounted = await rejection(parquet([CSV, { ...JSONL, rows: 6 }]))
    expect(miscounted).toMatchObject({ code: ROW_COUNT_MISMATCH, expected: 6, loaded: 5 })
  })
})

describe('encodeFile (parquet): a file without refused rows', () => {
  // The bytes before rows could be refused: an object sink recognises its own earlier write by them.
  const DIGESTS: Record<Compression, string> = {
    none: 'e0e71832d7ac90f44bb7906147813cc50b4c8cb768c4097b322c835540daae84',
    gzip: '8e61aeefe2e4cc71b2c692121ef53b75371dbaed5ff86453d90db6054560d69e',
    zstd: '9af5dd98f7fee29203e5b083950881d55a139e5087d4eb09822b89eff1c2e251',
  }
  const all: Field[] = [
    { name: 'id', type: 'int' },
    { name: 'name', type: 'string' },
    { name: 'amount', type: 'double' },
    { name: 'seen', type: 'timestamp' },
    { name: 'day', type: 'date' },
    { name: 'ok', type: 'boolean' },
    { name: 'big', type: 'long' },
    { name: 'doc', type: 'json' },
  ]
  const clean = (format: 'csv' | 'jsonl', body: string, rows: number): FilePart => {
    const schema = { namespace: 't', fields: all }
    return { namespace: 't', schemaVersion: 1, format, rows, body: new TextEncoder().encode(body), schema }
  }
  const parts = [
    clean(
      'csv',
      '1,"a\nb",1.5,2024-01-01T00:00:00Z,2024-01-01,true,9223372036854775807,"{""k"":1}"\n2,,,,,,,\n' +
        '3,"c",-0,2024-06-30T23:00:00.5-01:00,0044-03-15 (BC),false,-1,"[1]"',
      3,
    ),
    clean(
      'jsonl',
      '{"id":4,"name":"d","amount":0.1,"seen":"2024-01-01 10:30","day":"12345-06-07","ok":false,' +
        '"big":9007199254740993,"doc":{"a": [1, 2.50]}}\n\n{"id":5}\n',
      2,
    ),
  ]

  it.each(['none', 'gzip', 'zstd'] as const)(
    '%s: encodes to the same bytes as before',
    async (compression) => {
      const chunks = await parquet(parts, compression)
      expect(createHash('sha256').update(Buffer.concat(chunks)).digest('hex')).toBe(DIGESTS[compression])
    },
  )
})
