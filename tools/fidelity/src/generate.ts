/**
 * fast-check arbitraries of tables with every field type. Each column's edge values are laid out
 * over the first rows of every run (so no run can miss one), and are weighted in again among the
 * random rows after them.
 */
import type { FieldType } from '@skippr/connector-api'
import fc from 'fast-check'
import { daysFromCivil, MICROS_PER_DAY } from './calendar.js'
import { type Column, ID, type JsonData, type Row, type Table, type Value } from './table.js'

/** What a source format can hold; each source generates only values its format has a form for. */
export interface Domain {
  /** `file`: years 1–9999, the `YYYY-MM-DD` form; `typed`: BC and far-future years too. */
  readonly years: 'file' | 'typed'
  /** PostgreSQL's `infinity` / `-infinity` timestamps. */
  readonly infinity: boolean
  /** NaN and ±Infinity as top-level doubles (JSON has no form for them). */
  readonly nonFinite: boolean
}

const day = (year: number, month = 1, dayOfMonth = 1) => daysFromCivil({ year, month, day: dayOfMonth })
const at = (days: number, micros = 0n) => BigInt(days) * MICROS_PER_DAY + micros

export const STRING_EDGES: readonly string[] = [
  '',
  ' ',
  'a"b',
  `37°36'37.8"N`,
  'end"',
  '"quoted"',
  '"',
  ',',
  'a,b',
  '1,a"b,c"d,3',
  '\r',
  '\n',
  '\r\n',
  'x\r\ny',
  '\\.',
  'before\n\\.\nafter',
  '\\N',
  '\\',
  '\uFEFF',
  '\uFEFFbom',
  '\t',
  'tab\there',
  'ünï©ødé 日本語 🎉 \u2028',
  'NULL',
  'null',
  ' padded ',
  'long '.repeat(1500),
]

const INT_EDGES = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31 - 2, -(2 ** 31) + 1]

const LONG_EDGES = [
  0n,
  2n ** 53n - 1n,
  2n ** 53n + 1n,
  -(2n ** 53n) - 1n,
  2n ** 63n - 1n,
  -(2n ** 63n),
  2n ** 63n - 2n,
  -(2n ** 63n) + 1n,
  2n ** 31n,
  -(2n ** 31n) - 1n,
]

const FINITE_DOUBLE_EDGES = [
  0,
  -0,
  1.5,
  0.1,
  -2.5,
  2 ** 53 + 2,
  2 ** 63,
  -(2 ** 63),
  5e-324,
  2.2250738585072014e-308,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  1e21,
  123456789.12345679,
]
const NON_FINITE_DOUBLES = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]

const FILE_DATE_EDGES = [
  day(1970),
  day(1969, 12, 31),
  day(2000, 2, 29),
  day(1900, 3, 1),
  day(1),
  day(9999, 12, 31),
]
/** BC (year 0 is 1 BC) down to 4713 BC, far future up to PostgreSQL's last date. */
const TYPED_DATE_EDGES = [day(-43, 3, 15), day(0, 12, 31), day(-4712), day(10000), day(5874897, 12, 31)]

const FILE_TIMESTAMP_EDGES = [
  0n,
  -1n,
  1n,
  at(day(2020, 1, 2), 37_800_000_000n),
  at(day(1969, 12, 31), MICROS_PER_DAY - 1n),
  at(day(1)),
  at(day(9999, 12, 31), MICROS_PER_DAY - 1n),
  at(day(2024, 2, 29), 123_456n),
]
/** DuckDB's TIMESTAMPTZ ends in 294247 AD, PostgreSQL's timestamptz begins in 4713 BC. */
const TYPED_TIMESTAMP_EDGES = [at(day(-43, 3, 15), 43_200_000_001n), at(day(-4712)), at(day(294246, 12, 31))]
const INFINITE_TIMESTAMPS = ['infinity', '-infinity'] as const

const JSON_EDGES: JsonData[] = [
  {},
  [],
  'text',
  0,
  1.5,
  true,
  [null],
  { a: [1, 2, { b: null }] },
  { quote: 'a"b', lines: 'x\r\ny', comma: ',' },
  { big: 9007199254740991, small: -9007199254740991, tiny: 5e-324 },
  { ünï: '日本語', emoji: '🎉' },
  { deep: { deeper: { deepest: [[], {}, ['x']] } } },
]

const noNul = (s: string) => !s.includes('\u0000')

const nastyString = fc
  .string({
    unit: fc.constantFrom(',', '"', '\r', '\n', '\\', '.', '\t', ' ', 'a', 'é', '\uFEFF', '🎉'),
    maxLength: 12,
  })
  .filter(noNul)

const randomString = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 24 }).filter(noNul), nastyString)

/** Finite, not −0 (PostgreSQL's jsonb has no negative zero), NUL-free strings. */
const jsonData: fc.Arbitrary<JsonData> = fc.letrec<{ value: JsonData }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ maxLength: 10 }).filter(noNul),
    fc.integer(),
    fc.maxSafeInteger(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }).filter(noNul), tie('value'), { maxKeys: 4 }),
  ),
})).value

/** Top-level JSON null would be indistinguishable from SQL NULL in a CSV field. */
const topJson = jsonData.filter((v) => v !== null)

interface TypeSpec {
  readonly edges: readonly Value[]
  readonly random: fc.Arbitrary<Value>
}

function typeSpec(type: FieldType, domain: Domain): TypeSpec {
  const typed = domain.years === 'typed'
  const minDay = typed ? day(-4712) : day(1)
  const maxDay = typed ? day(5874897, 12, 31) : day(9999, 12, 31)
  const maxTimestampDay = typed ? day(294246, 12, 31) : day(9999, 12, 31)
  switch (type) {
    case 'string':
      return { edges: STRING_EDGES, random: randomString }
    case 'int':
      return { edges: INT_EDGES, random: fc.integer() }
    case 'long':
      return { edges: LONG_EDGES, random: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) }
    case 'double':
      return domain.nonFinite
        ? { edges: [...FINITE_DOUBLE_EDGES, ...NON_FINITE_DOUBLES], random: fc.double() }
        : {
            edges: FINITE_DOUBLE_EDGES,
            random: fc.double({ noNaN: true, noDefaultInfinity: true }),
          }
    case 'boolean':
      return { edges: [true, false], random: fc.boolean() }
    case 'date':
      return {
        edges: typed ? [...FILE_DATE_EDGES, ...TYPED_DATE_EDGES] : FILE_DATE_EDGES,
        random: fc.integer({ min: minDay, max: maxDay }),
      }
    case 'timestamp':
      return {
        edges: [
          ...FILE_TIMESTAMP_EDGES,
          ...(typed ? TYPED_TIMESTAMP_EDGES : []),
          ...(domain.infinity ? INFINITE_TIMESTAMPS : []),
        ],
        random: fc.bigInt({ min: at(minDay), max: at(maxTimestampDay, MICROS_PER_DAY - 1n) }),
      }
    case 'json':
      return { edges: JSON_EDGES, random: topJson }
  }
}

/** The columns of a full table: `id`, then one column of each field type. */
export const ALL_TYPES: readonly Column[] = [
  { name: 's', type: 'string' },
  { name: 'i', type: 'int' },
  { name: 'l', type: 'long' },
  { name: 'd', type: 'double' },
  { name: 'b', type: 'boolean' },
  { name: 'dt', type: 'date' },
  { name: 'ts', type: 'timestamp' },
  { name: 'j', type: 'json' },
]

/** Each edge value once per column, a NULL among them, in an order of fast-check's choosing. */
function edgeColumn(spec: TypeSpec, rows: number, nullable: boolean): fc.Arbitrary<(Value | null)[]> {
  const values: (Value | null)[] = nullable ? [...spec.edges, null] : [...spec.edges]
  return fc
    .shuffledSubarray(values, { minLength: values.length, maxLength: values.length })
    .map((shuffled) => Array.from({ length: rows }, (_, k) => shuffled[k % shuffled.length] ?? null))
}

function randomCell(spec: TypeSpec, nullable: boolean): fc.Arbitrary<Value | null> {
  const value = fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...spec.edges) },
    { weight: 3, arbitrary: spec.random },
  )
  return nullable ? fc.option(value, { nil: null, freq: 6 }) : value
}

export interface TableOptions {
  readonly columns: readonly Column[]
  readonly domain: Domain
  /** With an `id` column (a unique int, the PostgreSQL source's primary key). */
  readonly withId: boolean
  /** Whether NULL is generated. */
  readonly nullable: boolean
  readonly maxRandomRows?: number
}

export function tableArbitrary(options: TableOptions): fc.Arbitrary<Table> {
  const specs = options.columns.map((c) => typeSpec(c.type, options.domain))
  const edgeRows = Math.max(...specs.map((s) => s.edges.length + 1))
  const edges = fc.tuple(...specs.map((s) => edgeColumn(s, edgeRows, options.nullable)))
  const random = fc.array(fc.tuple(...specs.map((s) => randomCell(s, options.nullable))), {
    minLength: 1,
    maxLength: options.maxRandomRows ?? 20,
  })
  return fc.tuple(edges, random).map(([edgeColumns, randomRows]) => {
    const body: Row[] = [
      ...Array.from({ length: edgeRows }, (_, r) => edgeColumns.map((column) => column[r] ?? null)),
      ...randomRows,
    ]
    const columns = options.withId
      ? [{ name: ID, type: 'int' as const }, ...options.columns]
      : options.columns
    const rows = options.withId ? body.map((row, r) => [r, ...row]) : body
    return { columns, rows }
  })
}
