/**
 * Public test material nobody here wrote, installed from npm: csv-spectrum's parser test files
 * with their expected JSON, and CSV and JSON files of vega-datasets, whose expected rows are
 * DuckDB's own reading of the same file.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { SourceCell, SourceRows } from './source-cells.js'
import type { Column } from './table.js'

const require = createRequire(import.meta.url)
const SPECTRUM_DIR = path.dirname(require.resolve('csv-spectrum/package.json'))
const VEGA_DIR = path.join(path.dirname(require.resolve('vega-datasets')), '..', 'data')

/** A few MB of varied files: dates, nulls, quoted text, mixed-type JSON keys. */
export const VEGA_FILES = [
  'airports.csv',
  'co2-concentration.csv',
  'disasters.csv',
  'github.csv',
  'la-riots.csv',
  'seattle-weather.csv',
  'stocks.csv',
  'weather.csv',
  'barley.json',
  'budgets.json',
  'cars.json',
  'flights-2k.json',
  'movies.json',
  'penguins.json',
]

export interface CorpusFile {
  readonly name: string
  readonly format: 'csv' | 'jsonl'
  /** The bytes the File source reads (a vega JSON array becomes one object per line). */
  readonly body: string | Buffer
  expected(): Promise<SourceRows>
}

/** Columns the File source does not type stay strings; every value is compared as its text. */
const textColumns = (names: readonly string[]): Column[] => names.map((name) => ({ name, type: 'string' }))

/**
 * csv-spectrum files whose expected JSON disagrees with the CSV itself: they are compared with
 * DuckDB's reading instead.
 */
export const SPECTRUM_JSON_DISAGREES: Record<string, string> = {
  location_coordinates: 'its JSON has the phone number 1234567890 where the CSV has 2095257564',
}

export function csvSpectrumFiles(): CorpusFile[] {
  return readdirSync(path.join(SPECTRUM_DIR, 'csvs'))
    .filter((f) => f.endsWith('.csv'))
    .sort()
    .map((file) => {
      const name = file.replace(/\.csv$/, '')
      const csv = path.join(SPECTRUM_DIR, 'csvs', file)
      return {
        name,
        format: 'csv',
        body: readFileSync(csv),
        expected: () => (name in SPECTRUM_JSON_DISAGREES ? duckdbCsv(csv) : spectrumJson(name)),
      }
    })
}

async function spectrumJson(name: string): Promise<SourceRows> {
  const json = JSON.parse(readFileSync(path.join(SPECTRUM_DIR, 'json', `${name}.json`), 'utf8')) as
    | Record<string, string>
    | Record<string, string>[]
  // A one-record file's expected JSON is the record itself.
  const rows = Array.isArray(json) ? json : [json]
  const names = Object.keys(rows[0] ?? {})
  return { columns: textColumns(names), rows: rows.map((row) => names.map((n) => ({ text: row[n] ?? '' }))) }
}

export function vegaFiles(): CorpusFile[] {
  return VEGA_FILES.map((file) => {
    const source = path.join(VEGA_DIR, file)
    if (file.endsWith('.csv'))
      return { name: file, format: 'csv', body: readFileSync(source), expected: () => duckdbCsv(source) }
    const records = JSON.parse(readFileSync(source, 'utf8')) as unknown[]
    return {
      name: file,
      format: 'jsonl',
      body: `${records.map((r) => JSON.stringify(r)).join('\n')}\n`,
      expected: () => duckdbJson(source),
    }
  })
}

async function duckdb<T>(
  use: (connection: Awaited<ReturnType<DuckDBInstance['connect']>>) => Promise<T>,
): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:')
  try {
    const connection = await instance.connect()
    try {
      return await use(connection)
    } finally {
      connection.closeSync()
    }
  } finally {
    instance.closeSync()
  }
}

/** DuckDB's CSV reader, every field as its text: NULL only for an unquoted empty field, as the contract's CSV. */
function duckdbCsv(file: string): Promise<SourceRows> {
  return duckdb(async (connection) => {
    const reader = await connection.runAndReadAll(
      `SELECT * FROM read_csv('${file}', header = true, all_varchar = true, allow_quoted_nulls = false)`,
    )
    const rows = reader.getRowsJS() as (string | null)[][]
    return {
      columns: textColumns(reader.columnNames()),
      rows: rows.map((row) => row.map((text): SourceCell => (text === null ? null : { text }))),
    }
  })
}

/** DuckDB's JSON reader, each record's values as JSON text; a missing key is NULL. */
function duckdbJson(file: string): Promise<SourceRows> {
  return duckdb(async (connection) => {
    const reader = await connection.runAndReadAll(
      `SELECT json FROM read_json_objects('${file}', format = 'array')`,
    )
    const records = (reader.getRowsJS() as [string][]).map(
      ([json]) => JSON.parse(json) as Record<string, unknown>,
    )
    const names = [...new Set(records.flatMap((r) => Object.keys(r)))]
    return {
      columns: textColumns(names),
      rows: records.map((r) =>
        names.map(
          (n): SourceCell => (r[n] === undefined || r[n] === null ? null : { json: JSON.stringify(r[n]) }),
        ),
      ),
    }
  })
}
