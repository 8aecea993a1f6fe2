import { CONFIG_INVALID, hasCode, parseConnectorConfig } from '@skippr/connector-api'
import { describe, expect, it } from 'vitest'
import { source } from '../src/index.js'

const at = { file: 'skippr.yml', path: 'data_sources.rentals.File' }
const parse = (raw: unknown) => () => parseConnectorConfig(source, raw, at)

describe('File config', () => {
  it('accepts the documented fields', () => {
    const config = {
      path: 'data/*.csv',
      format: 'csv',
      header: true,
      namespace: 'rentals',
      schema: [{ name: 'id', type: 'long', nullable: false }],
      chunk_bytes: 1 << 20,
    }
    expect(parse(config)()).toEqual(config)
    expect(parse({ path: 'exports/*.parquet', format: 'parquet', namespace: 'orders' })()).toEqual({
      path: 'exports/*.parquet',
      format: 'parquet',
      namespace: 'orders',
    })
    expect(source.type).toBe('File')
    expect(source.kind).toBe('source')
  })

  it('rejects problems in one line naming the path', () => {
    const cases: [unknown, string][] = [
      [
        { path: 'a.csv', format: 'csv', sep: ';' },
        'skippr.yml: data_sources.rentals.File: unknown key sep: remove it or check its spelling',
      ],
      [
        { path: 'a.jsonl', format: 'jsonl', header: false },
        'skippr.yml: data_sources.rentals.File.header: header applies to csv only: remove it',
      ],
      [
        { path: 'a.parquet', format: 'parquet', header: true },
        'skippr.yml: data_sources.rentals.File.header: header applies to csv only: remove it',
      ],
      [
        { path: 'a.parquet', format: 'parquet', schema: [{ name: 'x', type: 'int' }] },
        'skippr.yml: data_sources.rentals.File.schema: a Parquet file declares its own columns and types: remove schema',
      ],
      [
        { path: '*.csv', format: 'csv' },
        'skippr.yml: data_sources.rentals.File.namespace: no namespace can be derived from the path *.csv: set namespace',
      ],
      [
        {
          path: 'a.csv',
          format: 'csv',
          schema: [
            { name: 'x', type: 'int' },
            { name: 'x', type: 'long' },
          ],
        },
        'skippr.yml: data_sources.rentals.File.schema.1.name: duplicate field x',
      ],
    ]
    for (const [raw, message] of cases) {
      expect(parse(raw)).toThrow(message)
    }
    for (const raw of [
      { path: 'a.csv', format: 'tsv' },
      { path: 'a.csv', format: 'csv', chunk_bytes: 100 },
      { path: 'a.csv', format: 'csv', schema: [{ name: 'x', type: 'decimal' }] },
      { format: 'csv' },
    ]) {
      try {
        parse(raw)()
        expect.unreachable()
      } catch (error) {
        expect(hasCode(error, CONFIG_INVALID)).toBe(true)
        expect((error as Error).message).toMatch(/^skippr\.yml: data_sources\.rentals\.File\.[\w.]+: /)
      }
    }
  })

  it('creates a source that derives its namespace from the path', async () => {
    const created = await source.create(parse({ path: 'data/rentals-*.csv', format: 'csv' })(), {
      configDir: '.',
      dataDir: '.',
      pipeline: 'p',
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    })
    await expect(created.discover()).rejects.toThrow(/no file matches data\/rentals-\*\.csv/)
  })
})
