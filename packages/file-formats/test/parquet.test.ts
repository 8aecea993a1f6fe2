import { createHash } from 'node:crypto'
import {
  BAD_RECORD,
  dateText,
  type Field,
  type FieldType,
  hasCode,
  ROW_COUNT_MISMATCH,
  timestampText,
} from '@skippr/connector-api'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Compression } from '../src/encoding.js'
import { encodeFile } from '../src/file-body.js'
import { parquetFile } from '../src/parquet.js'
import type { FilePart } from '../src/part-reader.js'
import { RECORDS_REFUSED, type RecordRefusal, type RecordsRefusedError } from '../src/records-refused.js'
import { openParquetReader, type ParquetReader } from './read-parquet.js'

const encoder = new TextEncoder()
const TARGET = 'file out/t/p-e-000000000001.parquet'
const BATCH = 'p/e/000000000001'

function part(
  format: 'csv' | 'jsonl',
  fields: readonly Field[],
  lines: readonly string[],
  rows = lines.length,
) {
  const body = encoder.encode(lines.map((line) => `${line}\n`).join(''))
  return {
    namespace: 't',
    schemaVersion: 1,
    format,
    rows,
    body,
    schema: { namespace: 't', fields },
  } as FilePart
}

const csvPart = (fields: readonly Field[], lines: readonly string[], rows?: number) =>
  part('csv', fields, lines, rows)
const jsonlPart = (fields: readonly Field[], lines: readonly string[], rows?: number) =>
  part('jsonl', fields, lines, rows)

const encode = (parts: readonly FilePart[], header: readonly Field[]) =>
  parquetFile(parts, header, TARGET, BATCH, 'none')

/** The error `run` throws. */
function thrown(run: () => unknown): Error {
  try {
    run()
  } catch (error) {
    return error as Error
  }
  throw new Error('nothing was thrown')
}

let duckdb: ParquetReader
beforeAll(async () => {
  duckdb = await openParquetReader()
})
afterAll(async () => {
  await duckdb.close()
})

/** Column `v`'s values in file order, as DuckDB reads them (`text`: cast to VARCHAR). */
async function readValues(chunks: Uint8Array[], as: 'value' | 'text'): Promise<unknown[]> {
  const rows = await duckdb.query(
    chunks,
    (source) => `SELECT v AS value, CAST(v AS VARCHAR) AS text FROM ${source} ORDER BY file_row_number`,
  )
  return rows.map((row) => row[as])
}

/**
 * Edge values of each type: the CSV field and the JSON value that write it (undefined where a
 * format cannot), and what DuckDB reads back — typed for numbers, booleans and strings, as text
 * (UTC, in DuckDB's spelling) for dates, timestamps and JSON.
 */
type Case = readonly [csv: string | undefined, json: string | undefined, expected: unknown]
const EDGES: Record<FieldType, { as: 'value' | 'text'; cases: readonly Case[] }> = {
  string: {
    as: 'value',
    cases: [
      ['"hello"', '"hello"', 'hello'],
      ['""', '""', ''],
      ['', 'null', null],
      ['"a\u0000b"', '"a\\u0000b"', 'a\u0000b'],
      ['"line1\nline2\r\nline3\r"', '"line1\\nline2\\r\\nline3\\r"', 'line1\nline2\r\nline3\r'],
      ['"she said ""hi"", twice"', '"she said \\"hi\\", twice"', 'she said "hi", twice'],
      ['"🚲 ünïcødé ✓"', '"🚲 ünïcødé ✓"', '🚲 ünïcødé ✓'],
      ['"back\\slash"', '"back\\\\slash"', 'back\\slash'],
      [undefined, '"\\ud83d\\udeb2 \\u00e9"', '🚲 é'],
      [undefined, '42', '42'],
      [undefined, '{"a": [1, 2.50]}', '{"a": [1, 2.50]}'],
    ],
  },
  int: {
    as: 'value',
    cases: [
      ['2147483647', '2147483647', 2147483647],
      ['-2147483648', '-2147483648', -2147483648],
      ['0', '0', 0],
      ['', 'null', null],
      [' +007 ', undefined, 7],
    ],
  },
  long: {
    as: 'value',
    cases: [
      ['9007199254740993', '9007199254740993', 9007199254740993n],
      ['9223372036854775807', '9223372036854775807', 9223372036854775807n],
      ['-9223372036854775808', '-9223372036854775808', -9223372036854775808n],
      ['-1', '-1', -1n],
      ['', 'null', null],
    ],
  },
  double: {
    as: 'value',
    cases: [
      ['-0', '-0', -0],
      ['-0.0', '-0.0', -0],
      ['0.1', '0.1', 0.1],
      ['1e308', '1e308', 1e308],
      ['1.7976931348623157E308', '1.7976931348623157E308', Number.MAX_VALUE],
      ['5e-324', '5e-324', 5e-324],
      ['-2.5e-10', '-2.5e-10', -2.5e-10],
      ['42', '42', 42],
      ['', 'null', null],
      ['NaN', undefined, Number.NaN],
      ['Infinity', undefined, Number.POSITIVE_INFINITY],
      ['-Infinity', undefined, Number.NEGATIVE_INFINITY],
      ['.5', undefined, 0.5],
    ],
  },
  boolean: {
    as: 'value',
    cases: [
      ['true', 'true', true],
      ['false', 'false', false],
      ['', 'null', null],
      ['TRUE', undefined, true],
    ],
  },
  date: {
    as: 'text',
    cases: [
      ['0001-01-01', '"0001-01-01"', '0001-01-01'],
      ['9999-12-31', '"9999-12-31"', '9999-12-31'],
      ['12345-06-07', '"12345-06-07"', '12345-06-07'],
      ['0044-03-15 (BC)', '"0044-03-15 (BC)"', '0044-03-15 (BC)'],
      ['0001-12-31 (BC)', '"0001-12-31 (BC)"', '0001-12-31 (BC)'],
      ['2024-02-29', '"2024-02-29"', '2024-02-29'],
      ['1970-01-01', '"1970-01-01"', '1970-01-01'],
      ['', 'null', null],
    ],
  },
  timestamp: {
    as: 'text',
    cases: [
      ['2024-01-01T00:05:43.123456Z', '"2024-01-01T00:05:43.123456Z"', '2024-01-01 00:05:43.123456+00'],
      [
        '2024-01-01T05:35:43.123456+05:30',
        '"2024-01-01T05:35:43.123456+05:30"',
        '2024-01-01 00:05:43.123456+00',
      ],
      ['2024-06-30T23:00:00.5-01:00', '"2024-06-30T23:00:00.5-01:00"', '2024-07-01 00:00:00.5+00'],
      ['1969-12-31T23:59:59.999999Z', '"1969-12-31T23:59:59.999999Z"', '1969-12-31 23:59:59.999999+00'],
      ['2024-01-01T00:00:00.123456000Z', '"2024-01-01T00:00:00.123456000Z"', '2024-01-01 00:00:00.123456+00'],
      ['12345-06-07T08:09:10Z', '"12345-06-07T08:09:10Z"', '12345-06-07 08:09:10+00'],
      [
        '0044-03-15 (BC) 10:00:00.000001Z',
        '"0044-03-15 (BC) 10:00:00.000001Z"',
        '0044-03-15 (BC) 10:00:00.000001+00',
      ],
      ['0001-01-01T00:30:00+01:00', '"0001-01-01T00:30:00+01:00"', '0001-12-31 (BC) 23:30:00+00'],
      ['2024-01-01 10:30', '"2024-01-01 10:30"', '2024-01-01 10:30:00+00'],
      ['2024-01-01', '"2024-01-01"', '2024-01-01 00:00:00+00'],
      ['', 'null', null],
    ],
  },
  json: {
    as: 'text',
    cases: [
      [
        '"{""a"":1,""b"":[1,2.50,{""c"":null}],""big"":12345678901234567891}"',
        '{"a":1,"b":[1,2.50,{"c":null}],"big":12345678901234567891}',
        '{"a":1,"b":[1,2.50,{"c":null}],"big":12345678901234567891}',
      ],
      [
        '"{""é"":""🚲"",""esc"":""\\u00e9\\n""}"',
        '{"é":"🚲","esc":"\\u00e9\\n"}',
        '{"é":"🚲","esc":"\\u00e9\\n"}',
      ],
      ['"[1,""two"",[3]]"', '[1,"two",[3]]', '[1,"two",[3]]'],
      ['"{ ""spaced"" : [ 1 , 2 ] }"', '{ "spaced" : [ 1 , 2 ] }', '{ "spaced" : [ 1 , 2 ] }'],
      ['"""just a string"""', '"just a string"', '"just a string"'],
      ['42', '42', '42'],
      ['', 'null', null],
    ],
  },
}

describe('parquetFile: every type round-trips exactly through DuckDB', () => {
  for (const [type, { as, cases }] of Object.entries(EDGES) as [FieldType, (typeof EDGES)[FieldType]][]) {
    const fields = [{ name: 'v', type }]
    for (const format of ['csv', 'jsonl'] as const) {
      it(`${type} from ${format}`, async () => {
        const usable = cases.filter((c) => (format === 'csv' ? c[0] : c[1]) !== undefined)
        const lines = usable.map(([csv, json]) => (format === 'csv' ? csv! : `{"v":${json}}`))
        const values = await readValues(encode([part(format, fields, lines)], fields), as)
        const expected = usable.map((c) => c[2])
        expect(values).toEqual(expected)
        // toEqual takes -0 for 0 in some versions: the sign of a double zero is checked on its own.
        values.forEach((value, i) => {
          if (typeof expected[i] === 'number') expect(Object.is(value, expected[i])).toBe(true)
        })
      })
    }
  }

  it('types the columns from the header: INT32, INT64, DOUBLE, UTF8, DATE, UTC micros, JSON', async () => {
    const header: Field[] = (Object.keys(EDGES) as FieldType[]).map((type) => ({ name: type, type }))
    const file = await duckdb.file(encode([csvPart(header, [',,,,,,,'])], header))
    const described = await duckdb.run(`DESCRIBE SELECT * FROM read_parquet('${file}')`)
    expect(Object.fromEntries(described.map((c) => [c.column_name, c.column_type]))).toEqual({
      string: 'VARCHAR',
      int: 'INTEGER',
      long: 'BIGINT',
      double: 'DOUBLE',
      boolean: 'BOOLEAN',
      date: 'DATE',
      timestamp: 'TIMESTAMP WITH TIME ZONE',
      json: 'JSON',
    })
    const [timestamp] = await duckdb.run(
      `SELECT logical_type FROM parquet_schema('${file}') WHERE name = 'timestamp'`,
    )
    expect(timestamp?.logical_type).toMatch(
      /isAdjustedToUTC=1, unit=TimeUnit\(MILLIS=<null>, MICROS=MicroSeconds/,
    )
  })

  it('holds every date of DuckDB calendar and every microsecond as connector-api writes them', async () => {
    const days = fc.sample(fc.integer({ min: -(2 ** 31) + 2, max: 2 ** 31 - 2 }), { numRuns: 500, seed: 7 })
    const micros = fc.sample(fc.bigInt({ min: -(2n ** 63n) + 2n, max: 2n ** 63n - 2n }), {
      numRuns: 500,
      seed: 7,
    })
    const dates = [{ name: 'v', type: 'date' as const }]
    const dateFile = encode([csvPart(dates, days.map(dateText))], dates)
    const readDays = await duckdb.query(
      dateFile,
      (s) => `SELECT v - DATE '1970-01-01' AS d FROM ${s} ORDER BY file_row_number`,
    )
    expect(readDays.map((r) => r.d)).toEqual(days.map(BigInt))
    const timestamps = [{ name: 'v', type: 'timestamp' as const }]
    const tsFile = encode(
      [
        jsonlPart(
          timestamps,
          micros.map((us) => `{"v":"${timestampText(us)}"}`),
        ),
      ],
      timestamps,
    )
    const readMicros = await duckdb.query(
      tsFile,
      (s) => `SELECT epoch_us(v) AS us FROM ${s} ORDER BY file_row_number`,
    )
    expect(readMicros.map((r) => r.us)).toEqual(micros)
  })
  it('reads an instant in any offset as its UTC microsecond, in the T and the space form alike', async () => {
    const first = -62_135_596_800_000_000n // 0001-01-01T00:00:00Z
    const last = 253_402_300_799_999_999n // 9999-12-31T23:59:59.999999Z
    const day = 86_400_000_000n
    const samples = fc.sample(
      fc.record({
        utc: fc.bigInt({ min: first + day, max: last - day }),
        offset: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        space: fc.boolean(),
      }),
      { numRuns: 500, seed: 11 },
    )
    const lines = samples.map(({ utc, offset, space }) => {
      const local = timestampText(utc + BigInt(offset) * 60_000_000n)
      const sign = offset < 0 ? '-' : '+'
      const hhmm = `${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`
      return `${space ? local.replace('T', ' ') : local}`.replace(/Z$/, `${sign}${hhmm}`)
    })
    const fields = [{ name: 'v', type: 'timestamp' as const }]
    const read = await duckdb.query(
      encode([csvPart(fields, lines)], fields),
      (s) => `SELECT epoch_us(v) AS us FROM ${s} ORDER BY file_row_number`,
    )
    expect(read.map((r) => r.us)).toEqual(samples.map((s) => s.utc))
  })
})

describe('parquetFile: parts and header', () => {
  it('puts NULL in the header columns a part lacks, in header order, for CSV and JSONL parts alike', async () => {
    const header: Field[] = [
      { name: 'id', type: 'long' },
      { name: 'name', type: 'string' },
      { name: 'seen', type: 'timestamp' },
      { name: 'added', type: 'string' },
    ]
    const older: Field[] = [
      { name: 'name', type: 'string' },
      { name: 'id', type: 'long' },
    ]
    const parts = [
      csvPart(older, ['"a",1', '"b",2']),
      jsonlPart(header, ['{"id":3,"name":"c","seen":"2024-01-01T00:00:00Z","added":"x"}', '{"id":4}']),
    ]
    const rows = await duckdb.query(
      encode(parts, header),
      (s) => `SELECT id, name, CAST(seen AS VARCHAR) AS seen, added FROM ${s} ORDER BY file_row_number`,
    )
    expect(rows).toEqual([
      { id: 1n, name: 'a', seen: null, added: null },
      { id: 2n, name: 'b', seen: null, added: null },
      { id: 3n, name: 'c', seen: '2024-01-01 00:00:00+00', added: 'x' },
      { id: 4n, name: null, seen: null, added: null },
    ])
  })

  it('widens a part whose types are narrower than the header: int to long, date to timestamp, any to string', async () => {
    const narrow: Field[] = [
      { name: 'n', type: 'int' },
      { name: 'd', type: 'date' },
      { name: 's', type: 'int' },
      { name: 'j', type: 'json' },
    ]
    const header: Field[] = [
      { name: 'n', type: 'long' },
      { name: 'd', type: 'timestamp' },
      { name: 's', type: 'string' },
      { name: 'j', type: 'string' },
    ]
    const parts = [
      csvPart(narrow, ['2147483647,0044-03-15 (BC),007,"[1, 2]"']),
      jsonlPart(narrow, ['{"n":-2147483648,"d":"12345-06-07","s":-5,"j":{"a": 1.50}}']),
      csvPart(header, ['9223372036854775807,2024-01-01T00:00:00.000001Z,"text",']),
    ]
    const rows = await duckdb.query(
      encode(parts, header),
      (s) => `SELECT n, CAST(d AS VARCHAR) AS d, s, j FROM ${s} ORDER BY file_row_number`,
    )
    expect(rows).toEqual([
      { n: 2147483647n, d: '0044-03-15 (BC) 00:00:00+00', s: '007', j: '[1, 2]' },
      { n: -2147483648n, d: '12345-06-07 00:00:00+00', s: '-5', j: '{"a": 1.50}' },
      { n: 9223372036854775807n, d: '2024-01-01 00:00:00.000001+00', s: 'text', j: null },
    ])
  })

  it('widens a long to a double only when the double holds it exactly', async () => {
    const long: Field[] = [{ name: 'v', type: 'long' }]
    const double: Field[] = [{ name: 'v', type: 'double' }]
    expect(await readValues(encode([csvPart(long, ['9007199254740992', '-3'])], double), 'value')).toEqual([
      2 ** 53,
      -3,
    ])
    const error = thrown(() => encode([jsonlPart(long, ['{"v":1}', '{"v":9007199254740993}'])], double))
    expect(hasCode(error, RECORDS_REFUSED)).toBe(true)
    expect((error as RecordsRefusedError).refusals).toEqual([
      {
        part: 0,
        row: 1,
        code: BAD_RECORD,
        error: expect.stringContaining('field "v": 9007199254740993 cannot be held exactly'),
      },
    ])
  })

  it('refuses a header that does not hold a part field', () => {
    const error = thrown(() =>
      encode([csvPart([{ name: 'v', type: 'double' }], ['1.5'])], [{ name: 'v', type: 'int' }]),
    )
    expect(error.message).toContain('field v (double) of part 1 has no column')
  })

  it('writes rows in row groups of 100,000, every value kept', async () => {
    const fields: Field[] = [{ name: 'v', type: 'long' }]
    const n = 250_001
    const lines = Array.from({ length: n }, (_, i) => String(i + 1))
    const chunks = encode([csvPart(fields, lines)], fields)
    expect(chunks.length).toBeGreaterThan(2)
    const [summary] = await duckdb.query(chunks, (s) => `SELECT count(*) AS rows, sum(v) AS total FROM ${s}`)
    expect(summary).toEqual({ rows: BigInt(n), total: (BigInt(n) * BigInt(n + 1)) / 2n })
    const file = await duckdb.file(chunks)
    const groups = await duckdb.run(
      `SELECT row_group_num_rows AS rows FROM parquet_metadata('${file}') ORDER BY row_group_id`,
    )
    expect(groups.map((g) => g.rows)).toEqual([100_000n, 100_000n, 50_001n])
  })

  it('writes the same bytes for the same parts: a retry rewrites the file identically', () => {
    const header: Field[] = (Object.keys(EDGES) as FieldType[]).map((type) => ({ name: type, type }))
    const parts = [
      csvPart(header, ['"a",1,2,0.5,true,2024-01-01,2024-01-01T00:00:00Z,"{}"', ',,,,,,,']),
      jsonlPart(header, ['{"string":"b","long":9223372036854775807,"json":[1]}']),
    ]
    expect(Buffer.concat(encode(parts, header))).toEqual(Buffer.concat(encode(parts, header)))
  })

  it('writes an empty file with the header columns when there are no rows', async () => {
    const header: Field[] = [{ name: 'v', type: 'long' }]
    const file = await duckdb.file(encode([], header))
    const rows = await duckdb.run(
      `SELECT count(*) AS n, typeof(any_value(v)) AS t FROM read_parquet('${file}')`,
    )
    expect(rows).toEqual([{ n: 0n, t: 'BIGINT' }])
  })
})

describe('parquetFile: refusals', () => {
  /** The message of the BadRecordError a malformed part throws. */
  const refused = (parts: FilePart[], header: readonly Field[]) => {
    const error = thrown(() => encode(parts, header))
    expect(hasCode(error, BAD_RECORD)).toBe(true)
    expect(error.message).toMatch(/^namespace t: /)
    return error.message
  }
  /** The one row refused for its value of field `v`. */
  const refusedRow = (parts: FilePart[], header: readonly Field[]): RecordRefusal => {
    const error = thrown(() => encode(parts, header))
    expect(hasCode(error, RECORDS_REFUSED)).toBe(true)
    const refusals = (error as RecordsRefusedError).refusals
    expect(refusals).toHaveLength(1)
    expect(refusals[0]).toMatchObject({
      code: BAD_RECORD,
      error: expect.stringMatching(/^namespace t, field "v": /),
    })
    return refusals[0]!
  }
  const one = (type: FieldType): Field[] => [
    { name: 'id', type: 'int' },
    { name: 'v', type },
  ]

  it.each([
    ['int', 'abc', '"abc" is not an int'],
    ['int', '2147483648', '"2147483648" is not an int'],
    ['int', '1.0', '"1.0" is not an int'],
    ['long', '9223372036854775808', '"9223372036854775808" is not a long'],
    ['double', '1e999', '"1e999" is beyond the range of a double'],
    ['double', '1e-400', '"1e-400" is too small for a double'],
    ['double', 'one', '"one" is not a double'],
    ['boolean', 'yes', '"yes" is not a boolean'],
    ['date', 'infinity', '"infinity" is an infinite date'],
    ['date', '2023-02-29', '"2023-02-29" is not a day of the calendar'],
    ['date', '0000-01-01', '"0000-01-01" is not a day of the calendar'],
    ['date', '01/02/2024', '"01/02/2024" is not a date'],
    [
      'timestamp',
      '2024-01-01T00:00:00.123456789Z',
      '"2024-01-01T00:00:00.123456789Z" has digits finer than a microsecond',
    ],
    ['timestamp', '-infinity', '"-infinity" is an infinite timestamp'],
    ['timestamp', '294247-01-10T04:00:54.775807Z', 'is beyond the timestamps'],
    ['timestamp', '2024-01-01T24:00:00Z', 'is not a time of day'],
    ['json', '"{""a"":}"', '"{\\"a\\":}" is not JSON text'],
  ] as const)('CSV %s %s', (type, field, reason) => {
    const row = refusedRow([csvPart(one(type), ['1,', `2,${field}`])], one(type))
    expect(row).toMatchObject({ part: 0, row: 1 })
    expect(row.error).toContain(reason)
  })

  it.each([
    ['int', '"5"', '"5" is not an int'],
    ['int', '1.5', '1.5 is not an int'],
    ['long', '1e3', '1e3 is not a long'],
    ['double', '"NaN"', '"NaN" is not a double'],
    ['boolean', '"true"', '"true" is not a boolean'],
    ['date', '"infinity"', '"infinity" is an infinite date'],
    [
      'timestamp',
      '"2024-01-01T00:00:00.0000001Z"',
      '"2024-01-01T00:00:00.0000001Z" has digits finer than a microsecond',
    ],
    ['timestamp', '1704067200', '1704067200 is not a timestamp'],
    [
      'string',
      '"pair \\ud83d\\udeb2 ok, lone \\ud800"',
      '"pair \\ud83d\\udeb2 ok, lone \\ud800" holds a lone UTF-16 surrogate',
    ],
  ] as const)('JSONL %s %s', (type, value, reason) => {
    const row = refusedRow([jsonlPart(one(type), ['{"id":1}', `{"id":2,"v":${value}}`])], one(type))
    expect(row).toMatchObject({ part: 0, row: 1 })
    expect(row.error).toContain(`field "v": ${reason}`)
  })

  it('names the part and the row of a bad record in a later part', () => {
    const fields = one('int')
    const row = refusedRow([csvPart(fields, ['1,1']), csvPart(fields, ['2,2', '3,x'])], fields)
    expect(row).toMatchObject({ part: 1, row: 1 })
    expect(row.error).toContain('field "v": "x" is not an int')
  })

  it.each([
    ['a quote that never closes', '1,"open', 'has a quoted field that never closes'],
    ['text after a closing quote', '1,"a"b', 'has text after the closing quote'],
    ['a quote inside an unquoted field', '1,a"b', 'has a quote inside an unquoted field'],
    ['too many fields', '1,2,3', 'has 3 fields where its schema has 2'],
    ['too few fields', '1', 'has 1 fields where its schema has 2'],
  ])('refuses CSV with %s', (_, line, reason) => {
    const message = refused([csvPart(one('string'), ['0,"ok"', line])], one('string'))
    expect(message).toContain(`row 2 of part 1 ${reason}`)
  })

  it.each([['[1,2]'], ['{"id":1'], ['"text"']])('refuses the JSON line %s', (line) => {
    expect(refused([jsonlPart(one('string'), ['{"id":0}', line])], one('string'))).toContain(
      'row 2 of part 1 is not a JSON object',
    )
  })

  it('refuses bytes that are not UTF-8, naming where', () => {
    const fields: Field[] = [{ name: 'v', type: 'string' }]
    const body = Buffer.concat([Buffer.from('"ok"\n"bad '), Buffer.from([0xff]), Buffer.from('"\n')])
    const message = refused([{ ...csvPart(fields, []), rows: 2, body }], fields)
    expect(message).toContain('part 1 holds bytes that are not UTF-8 (at byte 10 of its body)')
  })

  it('refuses a part whose decoded rows differ from its declared rows', () => {
    const fields: Field[] = [{ name: 'v', type: 'string' }]
    const error = thrown(() =>
      encode([csvPart(fields, ['"a"']), csvPart(fields, ['"multi\nline"'], 2)], fields),
    )
    expect(hasCode(error, ROW_COUNT_MISMATCH)).toBe(true)
    expect(error).toMatchObject({ target: TARGET, batch: BATCH, expected: 2, loaded: 1 })
    expect(error.message).toContain(`${TARGET}, batch ${BATCH}: the batch declares 2 rows but 1 were loaded`)
  })
})

describe('encodeFile: Parquet compressed inside the file, as the compression setting says', () => {
  const header: Field[] = (Object.keys(EDGES) as FieldType[]).map((type) => ({ name: type, type }))
  /** A row group of row-numbered values (many pages for every codec); the edge rows start a second. */
  const GENERATED = 100_000
  const generated = Array.from(
    { length: GENERATED },
    (_, i) =>
      `"s${i}",${i},${BigInt(i) * 9_007_199_254_741n},${i / 4},${i % 2 === 0},${dateText(i)},` +
      `${timestampText(BigInt(i) * 1_000_001n)},"{""i"":${i}}"`,
  )
  const parts = [
    csvPart(header, generated),
    csvPart(header, [
      '"she said ""hi"", twice",-2147483648,9223372036854775807,1e308,true,0044-03-15 (BC),' +
        '2024-01-01T05:35:43.123456+05:30,"{""big"":12345678901234567891}"',
      ',,,,,,,',
    ]),
    jsonlPart(header, ['{"string":"🚲 é","long":-9223372036854775808,"date":"12345-06-07","json":[1,2.50]}']),
  ]
  const encoded = (compression: Compression) =>
    encodeFile(parts, { format: 'parquet', compression }, { target: TARGET, batch: BATCH })

  it.each([
    ['none', 'SNAPPY'],
    ['gzip', 'GZIP'],
    ['zstd', 'ZSTD'],
  ] as const)(
    '%s writes every column chunk as %s, and DuckDB reads every value back',
    async (compression, codec) => {
      const chunks = await encoded(compression)
      // The file itself is not compressed again: it is still Parquet from its first bytes.
      expect(Buffer.concat(chunks).subarray(0, 4).toString()).toBe('PAR1')
      const file = await duckdb.file(chunks)
      const meta = await duckdb.run(
        `SELECT DISTINCT compression, count(DISTINCT row_group_id) OVER () AS groups
        FROM parquet_metadata('${file}')`,
      )
      expect(meta).toEqual([{ compression: codec, groups: 2n }])
      const source = `read_parquet('${file}', file_row_number = true)`
      const [generatedRows] = await duckdb.run(
        `SELECT count(*) AS rows FROM ${source} WHERE file_row_number < ${GENERATED}
        AND string = 's' || file_row_number AND int = file_row_number
        AND long = file_row_number * 9007199254741 AND double = file_row_number / 4
        AND boolean = (file_row_number % 2 = 0) AND date = DATE '1970-01-01' + file_row_number::INTEGER
        AND epoch_us(timestamp) = file_row_number * 1000001
        AND CAST(json AS VARCHAR) = '{"i":' || file_row_number || '}'`,
      )
      expect(generatedRows).toEqual({ rows: BigInt(GENERATED) })
      const edges = await duckdb.run(
        `SELECT string, int, long, double, boolean, CAST(date AS VARCHAR) AS date,
        CAST(timestamp AS VARCHAR) AS timestamp, CAST(json AS VARCHAR) AS json
        FROM ${source} WHERE file_row_number >= ${GENERATED} ORDER BY file_row_number`,
      )
      expect(edges).toEqual([
        {
          string: 'she said "hi", twice',
          int: -2147483648,
          long: 9223372036854775807n,
          double: 1e308,
          boolean: true,
          date: '0044-03-15 (BC)',
          timestamp: '2024-01-01 00:05:43.123456+00',
          json: '{"big":12345678901234567891}',
        },
        Object.fromEntries(header.map((f) => [f.name, null])),
        {
          string: '🚲 é',
          int: null,
          long: -9223372036854775808n,
          double: null,
          boolean: null,
          date: '12345-06-07',
          timestamp: null,
          json: '[1,2.50]',
        },
      ])
    },
  )

  it.each(['none', 'gzip', 'zstd'] as const)(
    '%s writes the same bytes for the same parts twice',
    async (compression) => {
      // Digests, not the bytes: comparing megabytes element by element takes toEqual seconds.
      const digest = async () =>
        createHash('sha256')
          .update(Buffer.concat(await encoded(compression)))
          .digest('hex')
      expect(await digest()).toBe(await digest())
    },
    // Two encodings of every type's values: seconds on a quiet machine, more under CI's load.
    120_000,
  )
})
