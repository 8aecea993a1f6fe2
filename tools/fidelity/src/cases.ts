/** The round-trip cases of each source format: a generated table and how the file is written. */
import fc from 'fast-check'
import type { FileStyle } from './file-formats.js'
import { ALL_TYPES, type Domain, tableArbitrary } from './generate.js'
import type { Database } from './postgres.js'
import { runSchema } from './postgres.js'
import type { SourceFixture, SourceKind } from './sources.js'
import { writeParquetSource, writePostgresSource, writeTableAsFile } from './sources.js'
import type { Table } from './table.js'

export const DOMAINS: Record<SourceKind, Domain> = {
  csv: { years: 'file', infinity: false, nonFinite: true },
  jsonl: { years: 'file', infinity: false, nonFinite: false },
  // A Parquet file's dates are typed: BC and far-future years too (DuckDB writes them).
  parquet: { years: 'typed', infinity: false, nonFinite: true },
  postgres: { years: 'typed', infinity: true, nonFinite: true },
}

export const fileStyle: fc.Arbitrary<FileStyle> = fc.record({
  lineEnd: fc.constantFrom('\n' as const, '\r\n' as const),
  finalNewline: fc.boolean(),
  bom: fc.boolean(),
  quoting: fc.constantFrom('rfc' as const, 'bare-quotes' as const, 'all' as const),
  timestampStyle: fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const),
  nullAsMissingKey: fc.boolean(),
})

export interface RoundTripCase {
  readonly table: Table
  readonly style: FileStyle
  /** CSV and JSON lines: configure `schema` instead of inferring it. */
  readonly schema: boolean
}

export const fullTable = (source: SourceKind) =>
  tableArbitrary({ columns: ALL_TYPES, domain: DOMAINS[source], withId: true, nullable: true })

/** One string column without an id: the shape where a record can be a line of its own (`\.`). */
export const singleStringTable = tableArbitrary({
  columns: [{ name: 's', type: 'string' }],
  domain: DOMAINS.csv,
  withId: false,
  nullable: false,
})

export function caseArbitrary(source: SourceKind): fc.Arbitrary<RoundTripCase> {
  const table =
    source === 'csv'
      ? fc.oneof({ weight: 4, arbitrary: fullTable(source) }, { weight: 1, arbitrary: singleStringTable })
      : fullTable(source)
  return fc.record({ table, style: fileStyle, schema: fc.boolean() })
}

/** Writes the case as `source` holds it. */
export function writeCase(
  source: SourceKind,
  dir: string,
  c: RoundTripCase,
  database: Database,
): Promise<SourceFixture> {
  switch (source) {
    case 'csv':
    case 'jsonl':
      return writeTableAsFile(dir, source, c.table, c.style, c.schema)
    case 'parquet':
      return writeParquetSource(dir, c.table)
    case 'postgres':
      return writePostgresSource(database, runSchema(), c.table)
  }
}
