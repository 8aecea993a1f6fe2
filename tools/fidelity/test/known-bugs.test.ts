/**
 * One describe per family of the value-fidelity issue's known bugs, each a targeted round trip
 * through the built skipprd into each sink, so what still fails is visible family by family.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DOMAINS, fullTable, singleStringTable } from '../src/cases.js'
import { type FileStyle, PLAIN_STYLE } from '../src/file-formats.js'
import { tableArbitrary } from '../src/generate.js'
import { LATE_COLUMNS, lateValueCells } from '../src/late-values.js'
import { nestedDoublesProblems, writeNestedDoublesParquet } from '../src/nested-doubles.js'
import { databasePerFile, runSchema } from '../src/postgres.js'
import { assertRoundTrips, RUNS } from '../src/property.js'
import { syncAndCompare, syncOnce, withRunDir } from '../src/roundtrip.js'
import { SINK_KINDS, type SinkKind } from '../src/sinks.js'
import {
  type SourceFixture,
  writeFileSource,
  writeParquetSource,
  writePostgresSource,
  writeTableAsFile,
} from '../src/sources.js'
import type { Table } from '../src/table.js'
import { sinkTarget } from '../src/targets.js'

/** Targeted families need fewer runs than the open property: their edge values are in every run. */
const FAMILY_RUNS = Math.max(2, Math.ceil(RUNS / 2))
const FILE_FORMATS = ['csv', 'jsonl'] as const

const sourceDatabase = databasePerFile('source')
const sinkDatabase = databasePerFile('sink')

function roundTrips<T>(
  sink: SinkKind,
  arbitrary: fc.Arbitrary<T>,
  write: (dir: string, value: T) => Promise<SourceFixture>,
  runs = FAMILY_RUNS,
) {
  return assertRoundTrips(
    arbitrary,
    (value) =>
      withRunDir(async (dir) =>
        syncAndCompare(dir, await write(dir, value), sinkTarget(sink, dir, sinkDatabase())),
      ),
    runs,
  )
}

/** Keeps other families out of a family's test: a leading BOM has its own (DuckDB drops it). */
const withoutBom = (table: Table): Table => ({
  ...table,
  rows: table.rows.map((row) => row.map((v) => (typeof v === 'string' ? v.replaceAll('\uFEFF', '') : v))),
})

const idAndString = tableArbitrary({
  columns: [{ name: 's', type: 'string' }],
  domain: DOMAINS.csv,
  withId: true,
  nullable: true,
}).map(withoutBom)

describe('CSV: a line holding only \\. (PostgreSQL ends COPY there)', () => {
  it.each(SINK_KINDS)('into %s: every record of a one-column file lands', async (sink) => {
    await roundTrips(sink, singleStringTable.map(withoutBom), (dir, table) =>
      writeTableAsFile(dir, 'csv', table, PLAIN_STYLE, false),
    )
  })
})

describe('CSV: a " inside an unquoted field is text, not a quote', () => {
  const bareQuotes: FileStyle = { ...PLAIN_STYLE, quoting: 'bare-quotes' }
  it.each(SINK_KINDS)(`into %s: 37°36'37.8"N, a"b, end" land as written`, async (sink) => {
    await roundTrips(sink, idAndString, (dir, table) =>
      writeTableAsFile(dir, 'csv', table, bareQuotes, false),
    )
  })
})

describe('CSV / JSON lines: values after the 256 KiB inference sample', () => {
  describe.each(FILE_FORMATS)('%s', (format) => {
    it.each(SINK_KINDS)(
      'into %s: 1.5 in an int-sampled column and a time in a date-sampled column land exactly',
      async (sink) => {
        await roundTrips(
          sink,
          lateValueCells(format === 'csv'),
          (dir, cells) => writeFileSource(dir, format, LATE_COLUMNS, cells, PLAIN_STYLE, false),
          2,
        )
      },
    )
  })
})

describe('Postgres source: infinity and BC timestamps, BC and far-future dates', () => {
  const temporal = tableArbitrary({
    columns: [
      { name: 'dt', type: 'date' },
      { name: 'ts', type: 'timestamp' },
    ],
    domain: DOMAINS.postgres,
    withId: true,
    nullable: true,
  })
  it.each(SINK_KINDS)('into %s', async (sink) => {
    await roundTrips(sink, temporal, (_dir, table) =>
      writePostgresSource(sourceDatabase(), runSchema(), table),
    )
  })
})

describe('JSON lines: integers beyond 2^53 stay exact (9223372036854775807, 9007199254740993)', () => {
  const longs = fc.record({
    table: tableArbitrary({
      columns: [{ name: 'l', type: 'long' }],
      domain: DOMAINS.jsonl,
      withId: true,
      nullable: true,
    }),
    schema: fc.boolean(),
  })
  it.each(SINK_KINDS)('into %s, inferred or with a schema', async (sink) => {
    await roundTrips(sink, longs, (dir, c) => writeTableAsFile(dir, 'jsonl', c.table, PLAIN_STYLE, c.schema))
  })
})

describe('Parquet: NaN and ±Infinity nested, −0.0 nested and at the top level', () => {
  it.each(SINK_KINDS)('into %s: named, never null; −0.0 keeps its sign', async (sink) => {
    await withRunDir(async (dir) => {
      const target = sinkTarget(sink, dir, sinkDatabase())
      const outcome = await syncOnce(dir, await writeNestedDoublesParquet(dir), target)
      // A loud refusal naming the value is within the rules; a silent change is not.
      if (outcome.kind === 'failed' && /NaN|Infinity|-0/.test(outcome.reason)) return
      expect(
        outcome.kind === 'failed' ? [outcome.reason] : nestedDoublesProblems(await target.read()),
      ).toEqual([])
    })
  })
})

describe('Parquet: BC and far-future dates and timestamps', () => {
  const temporal = tableArbitrary({
    columns: [
      { name: 'dt', type: 'date' },
      { name: 'ts', type: 'timestamp' },
    ],
    domain: { ...DOMAINS.parquet, years: 'typed' },
    withId: true,
    nullable: true,
  })
  it.each(SINK_KINDS)('into %s', async (sink) => {
    await roundTrips(sink, temporal, (dir, table) => writeParquetSource(dir, table))
  })
})

describe('CSV / JSON lines: a last line without a final newline lands on sync --once', () => {
  const noFinalNewline: FileStyle = { ...PLAIN_STYLE, finalNewline: false }
  describe.each(FILE_FORMATS)('%s', (format) => {
    it.each(SINK_KINDS)('into %s', async (sink) => {
      await roundTrips(sink, fullTable(format).map(withoutBom), (dir, table: Table) =>
        writeTableAsFile(dir, format, table, noFinalNewline, false),
      )
    })
  })
})

describe('a value starting with a byte-order mark keeps it (found by this suite)', () => {
  const boms = tableArbitrary({
    columns: [{ name: 's', type: 'string' }],
    domain: DOMAINS.csv,
    withId: true,
    nullable: false,
    maxRandomRows: 3,
  }).map(
    (table): Table => ({
      ...table,
      rows: table.rows.map(([id, s], r) => [id ?? r, r % 2 ? `\uFEFF${String(s)}` : '\uFEFF']),
    }),
  )
  it.each(SINK_KINDS)('CSV into %s', async (sink) => {
    await roundTrips(sink, boms, (dir, table) => writeTableAsFile(dir, 'csv', table, PLAIN_STYLE, false))
  })
  it.each(SINK_KINDS)('Postgres source into %s', async (sink) => {
    await roundTrips(sink, boms, (_dir, table) => writePostgresSource(sourceDatabase(), runSchema(), table))
  })
})
