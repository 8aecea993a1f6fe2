import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { hasCode, type SourceChunk } from '@skippr/connector-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCsv } from '../src/csv.js'
import { FILE_PARQUET_INVALID, FILE_PARQUET_TYPE, FILE_PARQUET_VALUE } from '../src/errors.js'
import { decodeError } from '../src/parquet.js'
import { fileSource, lastOffset, readChunks, recordingLogger, rows, tempDir, text } from './helpers.js'
import {
  CONVERTED,
  concat,
  int32s,
  PHYSICAL,
  REPETITION,
  text as textBytes,
  writeOneColumnParquet,
} from './parquet-writer.js'

// Parquet files are written by DuckDB, as a data platform would write them.
let duck: Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>
beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect()
})
afterAll(() => duck.closeSync())

async function query(sql: string): Promise<(string | null)[][]> {
  return (await duck.runAndReadAll(sql)).getRowsJS() as (string | null)[][]
}

/** Every type the source maps, NULL in every column of each eleventh row, awkward strings included. */
const TYPED_ROWS = `
  SELECT i::INTEGER AS i,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i * 1000000007 END::BIGINT AS b,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i / 3 END::DOUBLE AS d,
    CASE WHEN i % 11 = 0 THEN NULL WHEN i % 7 = 1 THEN '' ELSE 'name "' || i || '", line' || chr(10) || 'two' END AS s,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i % 2 = 0 END AS flag,
    CASE WHEN i % 11 = 0 THEN NULL ELSE DATE '1969-12-25' + i::INTEGER END AS day,
    CASE WHEN i % 11 = 0 THEN NULL ELSE TIMESTAMP '1969-12-31 23:59:59' + to_microseconds(i * 1234567) END AS ts,
    CASE WHEN i % 11 = 0 THEN NULL ELSE ((i * 12345 - 600000) / 100)::DECIMAL(10, 2) END AS dec,
    CASE WHEN i % 11 = 0 THEN NULL ELSE '123456789012345678901234.5'::DECIMAL(30, 5) * (i - 500) END AS bigdec,
    CASE WHEN i % 11 = 0 THEN NULL ELSE TIME '00:00:00' + to_microseconds(i * 987654321) END AS t,
    CASE WHEN i % 11 = 0 THEN NULL ELSE [i, i + 1, NULL] END AS lst,
    CASE WHEN i % 11 = 0 THEN NULL ELSE {'a': i, 'b': 'x' || i} END AS st,
    CASE WHEN i % 11 = 0 THEN NULL ELSE ('\\x00\\xFF' || i)::BLOB END AS bin,
    CASE WHEN i % 11 = 0 THEN NULL ELSE 18446744073709551615 - i END::UBIGINT AS u,
    CASE WHEN i % 11 = 0 THEN NULL WHEN i % 2 = 0 THEN '"just text"' ELSE '{"k": [' || i || ', null]}' END::JSON AS j,
    CASE WHEN i % 11 = 0 THEN NULL ELSE md5(i::VARCHAR)::UUID END AS id
  FROM range(1000) r(i)`

/** The same rows as the CSV fields the source must produce, formatted by DuckDB. */
const EXPECTED_FIELDS = `
  SELECT i::VARCHAR, b::VARCHAR, d::VARCHAR, s, flag::VARCHAR, strftime(day, '%Y-%m-%d'),
    strftime(ts, '%Y-%m-%dT%H:%M:%S.%fZ'), dec::VARCHAR, bigdec::VARCHAR,
    strftime(DATE '2000-01-01' + t, '%H:%M:%S.%f'), to_json(lst)::VARCHAR, to_json(st)::VARCHAR,
    to_base64(bin), u::VARCHAR, j::VARCHAR, id::VARCHAR`

async function writeParquet(path: string, select: string, options = 'ROW_GROUP_SIZE 300'): Promise<void> {
  await duck.run(`COPY (${select}) TO '${path}' (FORMAT parquet, ${options})`)
}

const decoded = (chunks: readonly SourceChunk[]) =>
  parseCsv(text(chunks), Number.POSITIVE_INFINITY).map((record) => record.fields)

describe('File source: Parquet', () => {
  it('discovers the columns and their types from the footer', async () => {
    const dir = await tempDir()
    await writeParquet(join(dir, 'typed.parquet'), TYPED_ROWS)
    const source = fileSource(dir, { path: 'typed.parquet', format: 'parquet' })
    const [schema] = await source.discover()
    expect(schema?.namespace).toBe('typed')
    expect(schema?.fields.map((f) => `${f.name}:${f.type}`)).toEqual([
      'i:int',
      'b:long',
      'd:double',
      's:string',
      'flag:boolean',
      'day:date',
      'ts:timestamp',
      'dec:double',
      'bigdec:string',
      't:string',
      'lst:json',
      'st:json',
      'bin:string',
      'u:long',
      'j:json',
      'id:string',
    ])
  })

  for (const compression of ['snappy', 'zstd', 'gzip', 'uncompressed']) {
    it(`passes every value on exactly as CSV (${compression})`, async () => {
      const dir = await tempDir()
      const file = join(dir, 'typed.parquet')
      await writeParquet(file, TYPED_ROWS, `ROW_GROUP_SIZE 300, COMPRESSION ${compression}`)
      const source = fileSource(dir, { path: 'typed.parquet', format: 'parquet', chunk_bytes: 16 * 1024 })
      const chunks = await readChunks(source)
      expect(chunks.length).toBeGreaterThan(4)
      expect(chunks.every((c) => c.format === 'csv' && c.namespace === 'typed')).toBe(true)
      expect(rows(chunks)).toBe(1000)
      const got = decoded(chunks)
      const expected = await query(`${EXPECTED_FIELDS} FROM read_parquet('${file}') ORDER BY i`)
      // Doubles are compared as numbers: DuckDB and JavaScript may print one double differently.
      const numberAt = 2
      expect(got.map((r) => r[numberAt] && Number(r[numberAt]))).toEqual(
        expected.map((r) => r[numberAt] && Number(r[numberAt])),
      )
      // JSON is compared as values: whitespace inside JSON text is not kept.
      const jsonAt = 14
      const asValue = (r: (string | null)[]) =>
        r.map((v, at) => (at === jsonAt && v !== null ? JSON.parse(v) : v))
      const withoutDouble = (r: (string | null)[]) => asValue(r).filter((_, at) => at !== numberAt)
      expect(got.map(withoutDouble)).toEqual(expected.map(withoutDouble))
    })
  }

  it('resumes after the last row passed on, and reads nothing once the file is done', async () => {
    const dir = await tempDir()
    await writeParquet(join(dir, 'typed.parquet'), TYPED_ROWS)
    const source = fileSource(dir, { path: 'typed.parquet', format: 'parquet', chunk_bytes: 8 * 1024 })
    const all = decoded(await readChunks(source))
    const first = await readChunks(source, undefined, { stopAfter: 3 })
    const rest = await readChunks(source, lastOffset(first))
    expect(rows(first)).toBeLessThan(1000)
    expect([...decoded(first), ...decoded(rest)]).toEqual(all)
    expect(await readChunks(source, lastOffset(rest))).toEqual([])
  })

  it('reads a file rewritten under the same name from its start, with a warning', async () => {
    const dir = await tempDir()
    const file = join(dir, 'events.parquet')
    await writeParquet(file, 'SELECT i AS n FROM range(10) r(i)')
    const logger = recordingLogger()
    const source = fileSource(dir, { path: 'events.parquet', format: 'parquet' }, { logger })
    const before = await readChunks(source)
    await writeParquet(file, 'SELECT i + 100 AS n FROM range(20) r(i)')
    const after = await readChunks(source, lastOffset(before))
    expect(decoded(after).map((r) => r[0])).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 100)))
    expect(logger.lines.some((l) => l.message.includes('replaced'))).toBe(true)
  })

  it('adds the columns of a later file and widens types, announcing each schema with its first chunk', async () => {
    const dir = await tempDir()
    await writeParquet(join(dir, 'part-1.parquet'), 'SELECT i::INTEGER AS id FROM range(5) r(i)')
    await writeParquet(
      join(dir, 'part-2.parquet'),
      "SELECT i::BIGINT AS id, 'x' AS note FROM range(5, 8) r(i)",
    )
    const source = fileSource(dir, { path: 'part-*.parquet', format: 'parquet', namespace: 'parts' })
    expect((await source.discover())[0]?.fields.map((f) => `${f.name}:${f.type}`)).toEqual(['id:int'])
    const chunks = await readChunks(source)
    const announced = chunks.filter((c) => c.schema)
    expect(announced.map((c) => c.schema?.fields.map((f) => `${f.name}:${f.type}`))).toEqual([
      ['id:int'],
      ['id:long', 'note:string'],
    ])
    expect(announced[0]).toBe(chunks[0])
    // Each chunk is in the schema of its time: the first file's before the second file adds a column.
    expect(decoded(chunks)).toEqual([['0'], ['1'], ['2'], ['3'], ['4'], ['5', 'x'], ['6', 'x'], ['7', 'x']])
  })

  it('following, skips a file it read to the end without opening it again, and reads new files', async () => {
    const dir = await tempDir()
    const first = join(dir, 'part-1.parquet')
    await writeParquet(first, 'SELECT i AS n FROM range(5) r(i)')
    // A whole second, so that setting it again restores the file's stamp exactly.
    const written = new Date('2026-01-01T00:00:00Z')
    await utimes(first, written, written)
    const source = fileSource(dir, { path: 'part-*.parquet', format: 'parquet', namespace: 'parts' })
    const stop = new AbortController()
    const chunks: SourceChunk[] = []
    const reading = (async () => {
      for await (const chunk of source.read(undefined, { signal: stop.signal, follow: true })) {
        chunks.push(chunk)
        if (rows(chunks) === 5) {
          // Same size and times, other bytes: opened again, its footer would no longer decode.
          const bytes = await readFile(first)
          bytes.fill(0, 4, bytes.length - 4)
          await writeFile(first, bytes)
          await utimes(first, written, written)
          await writeParquet(join(dir, 'part-2.parquet'), 'SELECT i AS n FROM range(5, 8) r(i)')
        }
        if (rows(chunks) === 8) stop.abort()
      }
    })()
    await reading
    expect(decoded(chunks).map((r) => r[0])).toEqual(['0', '1', '2', '3', '4', '5', '6', '7'])
  })

  it('leaves a file whose footer is not written yet for a later read', async () => {
    const dir = await tempDir()
    await writeParquet(join(dir, 'a.parquet'), 'SELECT 1 AS n')
    await writeFile(join(dir, 'b.parquet'), Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(100, 7)]))
    const logger = recordingLogger()
    const source = fileSource(dir, { path: '*.parquet', format: 'parquet', namespace: 'n' }, { logger })
    const chunks = await readChunks(source)
    expect(rows(chunks)).toBe(1)
    const warned = logger.lines.filter((l) => l.message.includes('not a complete Parquet file'))
    expect(warned.map((l) => l.fields?.file)).toEqual(['b.parquet'])
  })

  it('says what to do when no file is there yet, or none is complete', async () => {
    const dir = await tempDir()
    const source = fileSource(dir, { path: 'exports/*.parquet', format: 'parquet', namespace: 'e' })
    await expect(source.discover()).rejects.toThrow(
      'File source: no file matches exports/*.parquet (relative to the directory of skippr.yml): check path, or create the file',
    )
    await mkdir(join(dir, 'exports'))
    await writeFile(join(dir, 'exports', 'a.parquet'), 'PAR1')
    await expect(source.discover()).rejects.toThrow(
      'File source: no file matching exports/*.parquet is a complete Parquet file yet: wait for its writer to finish, or check path',
    )
  })

  it('fails with one clear line on a file with a broken footer', async () => {
    const dir = await tempDir()
    const broken = Buffer.concat([
      Buffer.from('PAR1'),
      Buffer.alloc(64, 9),
      Buffer.from([40, 0, 0, 0]),
      Buffer.from('PAR1'),
    ])
    await writeFile(join(dir, 'bad.parquet'), broken)
    const source = fileSource(dir, { path: 'bad.parquet', format: 'parquet' })
    const error = await source.discover().then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(hasCode(error, FILE_PARQUET_INVALID)).toBe(true)
    expect(error?.message).toMatch(
      /^bad\.parquet: not a readable Parquet file: .+: check that it was written completely/,
    )
  })

  it('says a file that does not start as Parquet does is not one, instead of waiting for its writer', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'noise.parquet'), Buffer.alloc(5000, 0x5a))
    const source = fileSource(dir, { path: 'noise.parquet', format: 'parquet' })
    const error = await source.discover().then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(hasCode(error, FILE_PARQUET_INVALID)).toBe(true)
    expect(error?.message).toBe(
      'noise.parquet: not a readable Parquet file: it does not start with the Parquet magic bytes PAR1: check that it was written completely, or move it out of the source path',
    )
  })

  it('refuses a column type it cannot hold without loss, naming the column', async () => {
    const dir = await tempDir()
    await writeParquet(join(dir, 'spans.parquet'), 'SELECT INTERVAL 3 DAY AS span')
    const source = fileSource(dir, { path: 'spans.parquet', format: 'parquet' })
    const error = await source.discover().then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(hasCode(error, FILE_PARQUET_TYPE)).toBe(true)
    expect(error?.message).toContain('spans.parquet: column span is INTERVAL')
  })
})

/**
 * The source's rows of a one-column file, a field per line (a NULL is an empty line, which both
 * sinks load as a NULL row and parseCsv skips as blank), and what the logger said.
 */
async function readColumn(dir: string, name: string) {
  const logger = recordingLogger()
  const chunks = await readChunks(fileSource(dir, { path: name, format: 'parquet' }, { logger }))
  const lines = text(chunks).split('\n').slice(0, -1)
  const fields = lines.map((line) => [line === '' ? null : (parseCsv(`${line}\n`, 1)[0]?.fields[0] ?? null)])
  return { fields, logger }
}

describe('File source: Parquet edge values', () => {
  it('reads the rows of the row groups when the footer counts none, with a warning, as DuckDB does', async () => {
    const dir = await tempDir()
    const file = join(dir, 'miscounted.parquet')
    await writeOneColumnParquet(file, {
      column: { name: 'n', repetition: REPETITION.REQUIRED, type: PHYSICAL.INT32 },
      repetitionLevels: [],
      definitionLevels: [0, 0, 0, 0, 0, 0],
      values: int32s([1, 2, 3, 4, 5, 6]),
      rows: 6,
      footerRows: 0,
    })
    const { fields, logger } = await readColumn(dir, 'miscounted.parquet')
    expect(fields).toEqual(await query(`SELECT n::VARCHAR FROM read_parquet('${file}')`))
    expect(fields).toHaveLength(6)
    const warned = logger.lines.filter((l) => l.message.includes('footer counts other rows'))
    expect(warned.length).toBeGreaterThan(0)
    for (const line of warned)
      expect(line.fields).toEqual({ file: 'miscounted.parquet', footer_rows: 0, row_group_rows: 6 })
  })

  it('writes −0 as -0 and NaN, ±Infinity as DuckDB reads them back from the CSV', async () => {
    const dir = await tempDir()
    await writeParquet(
      join(dir, 'doubles.parquet'),
      `SELECT * FROM (VALUES (1, -0.0::DOUBLE), (2, 0.0::DOUBLE), (3, 'nan'::DOUBLE), (4, 'inf'::DOUBLE),
        (5, '-inf'::DOUBLE), (6, -1.5::DOUBLE), (7, NULL)) t(i, d)`,
    )
    const chunks = await readChunks(fileSource(dir, { path: 'doubles.parquet', format: 'parquet' }))
    expect(decoded(chunks).map((r) => r[1])).toEqual([
      '-0',
      '0',
      'NaN',
      'Infinity',
      '-Infinity',
      '-1.5',
      null,
    ])
    // The body as the DuckDB sink loads it: read_csv with the column types given.
    const csv = join(dir, 'body.csv')
    await writeFile(csv, text(chunks))
    const landed = await query(
      `SELECT d::VARCHAR, (1 / d)::VARCHAR FROM read_csv('${csv}', columns = {'i': 'INTEGER', 'd': 'DOUBLE'},
        header = false, auto_detect = false, quote = '"', escape = '"', allow_quoted_nulls = false) ORDER BY i`,
    )
    expect(landed).toEqual([
      ['-0.0', '-inf'],
      ['0.0', 'inf'],
      ['nan', 'nan'],
      ['inf', '0.0'],
      ['-inf', '-0.0'],
      ['-1.5', '-0.6666666666666666'],
      [null, null],
    ])
  })

  it('writes NaN, ±Infinity and −0 inside lists, structs and maps as strings both sinks cast back', async () => {
    const dir = await tempDir()
    const file = join(dir, 'nested.parquet')
    await writeParquet(
      file,
      `SELECT ['nan'::DOUBLE, 'inf'::DOUBLE, '-inf'::DOUBLE, -0.0::DOUBLE, 0.0::DOUBLE, 1.5] AS l,
        {'a': 'nan'::DOUBLE, 'z': -0.0::DOUBLE} AS s, MAP {'k': '-inf'::DOUBLE} AS m`,
    )
    const [row] = decoded(await readChunks(fileSource(dir, { path: 'nested.parquet', format: 'parquet' })))
    expect(row).toEqual([
      '["NaN","Infinity","-Infinity","-0",0,1.5]',
      '{"a":"NaN","z":"-0"}',
      '{"k":"-Infinity"}',
    ])
    // Each element cast to a double is the file's double, as DuckDB reads it.
    const [l, s, m] = row as string[]
    const cast = await query(
      `SELECT [e::DOUBLE::VARCHAR FOR e IN json_extract_string('${l}', '$[*]')],
        (json_extract_string('${s}', '$.z'))::DOUBLE::VARCHAR, (json_extract_string('${m}', '$.k'))::DOUBLE::VARCHAR`,
    )
    const reference = await query(
      `SELECT [e::VARCHAR FOR e IN l], s.z::VARCHAR, m['k']::VARCHAR FROM read_parquet('${file}')`,
    )
    expect(cast).toEqual(reference)
  })

  it('lands an empty legacy repeated primitive as [] and a NULL list as NULL, as DuckDB reads them', async () => {
    const dir = await tempDir()
    const legacy = { name: 'x', repetition: REPETITION.REPEATED, type: PHYSICAL.INT32 }
    // Rows [1, 2], [], [3].
    await writeOneColumnParquet(join(dir, 'one-level.parquet'), {
      column: legacy,
      repetitionLevels: [0, 1, 0, 0],
      definitionLevels: [1, 1, 0, 1],
      values: int32s([1, 2, 3]),
      rows: 3,
    })
    // Rows [1, 2], [], NULL, [3].
    await writeOneColumnParquet(join(dir, 'two-level.parquet'), {
      column: {
        name: 'x',
        repetition: REPETITION.OPTIONAL,
        converted: CONVERTED.LIST,
        children: [{ ...legacy, name: 'element' }],
      },
      repetitionLevels: [0, 1, 0, 0, 0],
      definitionLevels: [2, 2, 1, 0, 2],
      values: int32s([1, 2, 3]),
      rows: 4,
    })
    // Rows {e: [1, 2]}, {e: []}, NULL.
    await writeOneColumnParquet(join(dir, 'in-struct.parquet'), {
      column: { name: 'x', repetition: REPETITION.OPTIONAL, children: [{ ...legacy, name: 'e' }] },
      repetitionLevels: [0, 1, 0, 0],
      definitionLevels: [2, 2, 1, 0],
      values: int32s([1, 2]),
      rows: 3,
    })
    for (const name of ['one-level.parquet', 'two-level.parquet', 'in-struct.parquet']) {
      const { fields } = await readColumn(dir, name)
      const reference = await query(`SELECT to_json(x)::VARCHAR FROM read_parquet('${join(dir, name)}')`)
      expect(fields, name).toEqual(reference)
    }
  })

  it('reads a data page v2 whose compressed values section is empty (only NULLs), as DuckDB does', async () => {
    const dir = await tempDir()
    await writeOneColumnParquet(join(dir, 'empty-page.parquet'), {
      column: { name: 'n', repetition: REPETITION.OPTIONAL, type: PHYSICAL.INT32 },
      repetitionLevels: [],
      definitionLevels: [0],
      values: new Uint8Array(0),
      rows: 1,
      emptyCompressedV2: true,
    })
    const { fields } = await readColumn(dir, 'empty-page.parquet')
    expect(fields).toEqual(await query(`SELECT n FROM read_parquet('${join(dir, 'empty-page.parquet')}')`))
    expect(fields).toEqual([[null]])
  })
})

describe('File source: Parquet text that is not UTF-8', () => {
  it('fails the read naming the rows, instead of passing U+FFFD on', async () => {
    const dir = await tempDir()
    const value = (bytes: Uint8Array) => concat(Uint8Array.of(bytes.length, 0, 0, 0), bytes)
    await writeOneColumnParquet(join(dir, 'latin1.parquet'), {
      column: {
        name: 's',
        repetition: REPETITION.REQUIRED,
        type: PHYSICAL.BYTE_ARRAY,
        converted: CONVERTED.UTF8,
      },
      repetitionLevels: [],
      definitionLevels: [0, 0],
      values: concat(value(textBytes('ok')), value(Uint8Array.of(0x63, 0x61, 0x66, 0xe9))), // "café" in Latin-1
      rows: 2,
    })
    await expect(readColumn(dir, 'latin1.parquet')).rejects.toThrow(
      'latin1.parquet: rows 1 to 2: a text value is not valid UTF-8, and passing it on would change it: ' +
        'fix the writer, or write the column as binary (no text type), which passes on as base64',
    )
  })
})

describe('decodeError', () => {
  it('tells a value longer than a string can be from a broken file', () => {
    // What decoding a 1 GiB text value throws (the corpus's large_string_map.brotli.parquet).
    const tooLong = Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), {
      code: 'ERR_STRING_TOO_LONG',
    })
    const error = decodeError('big.parquet', 0, 2, tooLong)
    expect(hasCode(error, FILE_PARQUET_VALUE)).toBe(true)
    expect(error.message).toBe(
      'big.parquet: rows 1 to 2: a value is longer than the 536,870,888 characters a string holds in Node.js, ' +
        'so the File source cannot pass it on: shorten or split the value, or move the file out of the source path',
    )
    expect(hasCode(decodeError('bad.parquet', 0, 2, new Error('invalid snappy')), FILE_PARQUET_INVALID)).toBe(
      true,
    )
  })
})

describe('File source: Parquet JSON columns', () => {
  it('passes the text of a JSON column on as written: big integers and −0 unchanged', async () => {
    const dir = await tempDir()
    const file = join(dir, 'docs.parquet')
    await writeParquet(
      file,
      `SELECT * FROM (VALUES (1, '{"id": 12345678901234567890, "x": -0.0}'::JSON), (2, '[1.50, "a"]'::JSON), (3, NULL)) t(i, j)`,
    )
    const chunks = await readChunks(fileSource(dir, { path: 'docs.parquet', format: 'parquet' }))
    expect(decoded(chunks)).toEqual(
      await query(`SELECT i::VARCHAR, j::VARCHAR FROM read_parquet('${file}') ORDER BY i`),
    )
  })
})
