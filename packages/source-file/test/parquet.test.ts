import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { hasCode, type SourceChunk } from '@skippr/connector-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCsv } from '../src/csv.js'
import { FILE_PARQUET_INVALID, FILE_PARQUET_TYPE } from '../src/errors.js'
import { fileSource, lastOffset, readChunks, recordingLogger, rows, tempDir, text } from './helpers.js'

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

  it('adds the columns of a later file and widens types, announcing the schema with its first chunk', async () => {
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
    expect(announced).toHaveLength(1)
    expect(announced[0]?.schema?.fields.map((f) => `${f.name}:${f.type}`)).toEqual(['id:long', 'note:string'])
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
