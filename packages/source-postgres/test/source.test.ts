import type { SourceChunk, SourceOffset } from '@skippr/connector-api'
import { hasCode, parseConnectorConfig, silentLogger } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PostgresSourceConfig } from '../src/index.js'
import {
  CURSOR_NOT_FOUND,
  source as definition,
  NO_KEY,
  OFFSET_INVALID,
  PostgresSource,
  SOURCE_UNAVAILABLE,
  TABLE_NOT_FOUND,
} from '../src/index.js'
import type { TestDb } from './db.js'
import { freshSchema, PG_URL, parseCsv } from './db.js'

let db: TestDb
beforeEach(async () => {
  db = await freshSchema()
})
afterEach(async () => {
  await db.drop()
})

function open(tables: PostgresSourceConfig['tables'], options: Partial<PostgresSourceConfig> = {}) {
  const config = parseConnectorConfig(
    definition,
    { connection_string: PG_URL, tables, ...options },
    { file: 'skippr.yml', path: 'data_sources.db.Postgres' },
  )
  return new PostgresSource(config, silentLogger)
}

function inSchema(tables: string[]): PostgresSourceConfig['tables'] {
  return tables.map((name) => ({ name, schema: db.schema }))
}

async function readAll(source: PostgresSource, from?: SourceOffset): Promise<SourceChunk[]> {
  const chunks: SourceChunk[] = []
  for await (const chunk of source.read(from, { signal: new AbortController().signal, follow: false }))
    chunks.push(chunk)
  return chunks
}

/** Reads one chunk and stops, as a run killed right after committing it would. */
async function readOne(source: PostgresSource, from?: SourceOffset): Promise<SourceChunk | undefined> {
  for await (const chunk of source.read(from, { signal: new AbortController().signal, follow: false }))
    return chunk
  return undefined
}

const ids = (chunks: SourceChunk[]) => chunks.flatMap((c) => parseCsv(c.body).map((row) => Number(row[0])))

describe('discover', () => {
  it('maps PostgreSQL types onto field types and finds the primary key', async () => {
    await db.sql(`CREATE TABLE kinds (
      a smallint, b integer, c bigint, d real, e double precision, f numeric(12, 2), g numeric,
      h boolean, i date, j timestamp, k timestamptz, l json, m jsonb, n text, o varchar(10), p uuid,
      q integer[], r serial, PRIMARY KEY (c, b))`)
    const source = open(inSchema(['kinds']))
    const [schema] = await source.discover()
    await source.close()
    expect(schema?.namespace).toBe('kinds')
    expect(schema?.primaryKey).toEqual(['c', 'b'])
    expect(Object.fromEntries(schema?.fields.map((f) => [f.name, f.type]) ?? [])).toEqual({
      a: 'int',
      b: 'int',
      c: 'long',
      d: 'double',
      e: 'double',
      f: 'double',
      g: 'string',
      h: 'boolean',
      i: 'date',
      j: 'timestamp',
      k: 'timestamp',
      l: 'json',
      m: 'json',
      n: 'string',
      o: 'string',
      p: 'string',
      q: 'string',
      r: 'int',
    })
    expect(schema?.fields.find((f) => f.name === 'a')?.nullable).toBe(true)
    expect(schema?.fields.find((f) => f.name === 'b')?.nullable).toBe(false)
  })

  it('names a missing table', async () => {
    const source = open(inSchema(['nope']))
    const error = await source.discover().catch((e: unknown) => e)
    expect(hasCode(error, TABLE_NOT_FOUND)).toBe(true)
    expect((error as Error).message).toContain(`${db.schema}.nope`)
  })
})

describe('record format', () => {
  it('emits CSV in field order with ISO UTC timestamps, true/false, and NULL apart from ""', async () => {
    await db.sql(`CREATE TABLE t (id int PRIMARY KEY, at timestamptz, local timestamp, day date, ok boolean,
      note text, doc jsonb, amount numeric(8,2))`)
    await db.sql(`INSERT INTO t VALUES
      (1, '2024-05-01 12:30:00.25+02', '2024-05-01 08:00:00', '2024-05-01', true, 'say "hi",
bye', '{"a": [1, 2]}', 12.5),
      (2, NULL, NULL, NULL, false, '', NULL, NULL)`)
    const source = open(inSchema(['t']))
    const [chunk] = await readAll(source)
    await source.close()
    expect(chunk?.rows).toBe(2)
    expect(chunk?.format).toBe('csv')
    expect(chunk?.schema?.fields.map((f) => f.name)).toEqual([
      'id',
      'at',
      'local',
      'day',
      'ok',
      'note',
      'doc',
      'amount',
    ])
    expect(parseCsv(chunk?.body ?? new Uint8Array())).toEqual([
      [
        '1',
        '2024-05-01T10:30:00.250000Z',
        '2024-05-01T08:00:00.000000Z',
        '2024-05-01',
        'true',
        'say "hi",\nbye',
        '{"a": [1, 2]}',
        '12.50',
      ],
      ['2', null, null, null, 'false', '', null, null],
    ])
  })
  it('renders infinity, BC years and years past 9999 in the contract text', async () => {
    await db.sql('CREATE TABLE t (id int PRIMARY KEY, at timestamptz, local timestamp, day date)')
    await db.sql(`INSERT INTO t VALUES
      (1, 'infinity', '-infinity', 'infinity'),
      (2, '0044-03-15 12:00:00.5+02 BC', '0001-12-31 23:59:59.999999 BC', '0044-03-15 BC'),
      (3, '12345-06-07 08:09:10+00', '12345-06-07 08:09:10', '12345-06-07')`)
    const source = open(inSchema(['t']))
    const [chunk] = await readAll(source)
    await source.close()
    expect(parseCsv(chunk?.body ?? new Uint8Array())).toEqual([
      ['1', 'infinity', '-infinity', 'infinity'],
      ['2', '0044-03-15 (BC) 10:00:00.500000Z', '0001-12-31 (BC) 23:59:59.999999Z', '0044-03-15 (BC)'],
      ['3', '12345-06-07T08:09:10.000000Z', '12345-06-07T08:09:10.000000Z', '12345-06-07'],
    ])
  })
})

describe('incremental read', () => {
  it('reads in chunks, resumes from the offset and picks up rows inserted between runs', async () => {
    await db.sql('CREATE TABLE orders (id serial PRIMARY KEY, item text)')
    await db.sql(`INSERT INTO orders (item) SELECT 'item ' || n FROM generate_series(1, 25) n`)
    const source = open(inSchema(['orders']), { batch_rows: 10 })
    const first = await readAll(source)
    expect(first.map((c) => c.rows)).toEqual([10, 10, 5])
    expect(ids(first)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
    const offset = first.at(-1)?.offset
    expect(offset).toEqual({ tables: { orders: { after: { id: '25' } } } })

    expect(await readAll(source, offset)).toEqual([])
    await db.sql(`INSERT INTO orders (item) VALUES ('late 1'), ('late 2'), ('late 3')`)
    const second = await readAll(source, offset)
    expect(ids(second)).toEqual([26, 27, 28])
    await source.close()
  })

  it('never skips or repeats rows that share a cursor value, across chunk boundaries and restarts', async () => {
    await db.sql('CREATE TABLE events (id int PRIMARY KEY, updated_at timestamptz NOT NULL)')
    // 30 rows over 3 timestamps: every chunk of 4 rows cuts through a run of equal cursor values.
    await db.sql(`INSERT INTO events SELECT n, '2024-01-01'::timestamptz + ((n % 3) || ' hours')::interval
      FROM generate_series(1, 30) n`)
    const source = open([{ name: 'events', cursor: 'updated_at', schema: db.schema }], { batch_rows: 4 })
    const seen: number[] = []
    let offset: SourceOffset | undefined
    // A run that dies after every chunk: each restart resumes from the last committed offset.
    for (;;) {
      const chunk = await readOne(source, offset)
      if (!chunk) break
      seen.push(...ids([chunk]))
      offset = chunk.offset
    }
    expect(seen.length).toBe(30)
    expect(new Set(seen).size).toBe(30)
    expect(offset).toEqual({
      tables: { events: { after: { updated_at: '2024-01-01 02:00:00+00', id: '29' } } },
    })

    // Between runs: a row ties the saved cursor with a higher id, a row moves forward, a new row lands.
    await db.sql(`INSERT INTO events VALUES (31, '2024-01-01 02:00:00+00'), (40, '2024-01-02')`)
    await db.sql(`UPDATE events SET updated_at = '2024-01-03' WHERE id = 1`)
    const next = await readAll(source, offset)
    expect(ids(next)).toEqual([31, 40, 1])
    await source.close()
  })

  it('keeps ties whole when a table has a cursor but no primary key', async () => {
    await db.sql('CREATE TABLE log (seen_at int, msg text)')
    await db.sql(`INSERT INTO log SELECT n / 4, 'm' || n FROM generate_series(0, 19) n`)
    const source = open([{ name: 'log', cursor: 'seen_at', schema: db.schema }], { batch_rows: 3 })
    const messages: string[] = []
    let offset: SourceOffset | undefined
    for (;;) {
      const chunk = await readOne(source, offset)
      if (!chunk) break
      messages.push(...parseCsv(chunk.body).map((row) => row[1] as string))
      offset = chunk.offset
    }
    expect(messages.sort()).toEqual(Array.from({ length: 20 }, (_, n) => `m${n}`).sort())
    await source.close()
  })

  it('leaves out rows whose cursor is NULL: they have no place in the order', async () => {
    await db.sql('CREATE TABLE t (id int PRIMARY KEY, seen int)')
    await db.sql('INSERT INTO t VALUES (1, 10), (2, NULL), (3, 5)')
    const source = open([{ name: 't', cursor: 'seen', schema: db.schema }])
    expect(ids(await readAll(source))).toEqual([3, 1])
    await source.close()
  })

  it('refuses an offset saved under a different key', async () => {
    await db.sql('CREATE TABLE orders (id int PRIMARY KEY, updated_at timestamptz)')
    const source = open([{ name: 'orders', cursor: 'updated_at', schema: db.schema }])
    const error = await readAll(source, { tables: { orders: { after: { id: '3' } } } }).catch(
      (e: unknown) => e,
    )
    expect(hasCode(error, OFFSET_INVALID)).toBe(true)
    expect((error as Error).message).toContain('(id)')
    expect((error as Error).message).toContain('(updated_at, id)')
    await source.close()
  })

  it('keeps the positions of tables it does not read', async () => {
    await db.sql('CREATE TABLE a (id int PRIMARY KEY)')
    await db.sql('INSERT INTO a VALUES (1)')
    const source = open(inSchema(['a']))
    const [chunk] = await readAll(source, { tables: { gone: { after: { id: '9' } } } })
    expect(chunk?.offset).toEqual({ tables: { gone: { after: { id: '9' } }, a: { after: { id: '1' } } } })
    await source.close()
  })

  it('explains a table with neither a primary key nor a cursor, and a missing cursor column', async () => {
    await db.sql('CREATE TABLE heap (v int)')
    const noKey = await readAll(open(inSchema(['heap']))).catch((e: unknown) => e)
    expect(hasCode(noKey, NO_KEY)).toBe(true)
    expect((noKey as Error).message).toContain('set cursor')
    const badCursor = await readAll(open([{ name: 'heap', cursor: 'ts', schema: db.schema }])).catch(
      (e: unknown) => e,
    )
    expect(hasCode(badCursor, CURSOR_NOT_FOUND)).toBe(true)
  })
})

describe('snapshot read', () => {
  it('copies the whole table every run and resumes an interrupted copy', async () => {
    await db.sql('CREATE TABLE dim (id int PRIMARY KEY, name text)')
    await db.sql(`INSERT INTO dim SELECT n, 'n' || n FROM generate_series(1, 7) n`)
    const source = open(inSchema(['dim']), { mode: 'snapshot', batch_rows: 3 })
    const full = await readAll(source)
    expect(ids(full)).toEqual([1, 2, 3, 4, 5, 6, 7])
    // A finished snapshot leaves no position: the next run copies everything again.
    expect(full.at(-1)?.offset).toEqual({ tables: {} })
    expect(ids(await readAll(source, full.at(-1)?.offset))).toEqual([1, 2, 3, 4, 5, 6, 7])

    // Interrupted after its first chunk, a copy continues where it stopped.
    const partial = full[0]?.offset
    expect(partial).toEqual({ tables: { dim: { after: { id: '3' } } } })
    expect(ids(await readAll(source, partial))).toEqual([4, 5, 6, 7])
    await source.close()
  })

  it('needs a primary key', async () => {
    await db.sql('CREATE TABLE heap (v int, at int)')
    const source = open([{ name: 'heap', cursor: 'at', schema: db.schema }], { mode: 'snapshot' })
    const error = await readAll(source).catch((e: unknown) => e)
    expect(hasCode(error, NO_KEY)).toBe(true)
    expect((error as Error).message).toContain('snapshot mode')
  })
})

describe('follow', () => {
  it('polls for new rows until the signal aborts', async () => {
    await db.sql('CREATE TABLE feed (id int PRIMARY KEY)')
    await db.sql('INSERT INTO feed VALUES (1)')
    const source = open(inSchema(['feed']), { poll_interval_seconds: 0.05 })
    const controller = new AbortController()
    const seen: number[] = []
    for await (const chunk of source.read(undefined, { signal: controller.signal, follow: true })) {
      seen.push(...ids([chunk]))
      if (seen.length === 1) await db.sql('INSERT INTO feed VALUES (2), (3)')
      if (seen.length === 3) controller.abort()
    }
    expect(seen).toEqual([1, 2, 3])
    await source.close()
  })
})

describe('connection errors', () => {
  it('reports an unreachable server without its password', async () => {
    const source = new PostgresSource(
      parseConnectorConfig(
        definition,
        { connection_string: 'postgres://app:s3cret-pw@127.0.0.1:1/test', tables: ['orders'] },
        { file: 'skippr.yml', path: 'data_sources.db.Postgres' },
      ),
      silentLogger,
    )
    const error = await source.discover().catch((e: unknown) => e)
    expect(hasCode(error, SOURCE_UNAVAILABLE)).toBe(true)
    expect((error as Error).message).toContain('postgres://app@127.0.0.1:1/test')
    expect(JSON.stringify(error)).not.toContain('s3cret-pw')
    expect(String(error)).not.toContain('s3cret-pw')
    expect(definition.secretFields).toEqual(['connection_string'])
  })
})

describe('config', () => {
  it('rejects a table listed twice and unknown keys', () => {
    const at = { file: 'skippr.yml', path: 'data_sources.db.Postgres' }
    expect(() =>
      parseConnectorConfig(
        definition,
        { connection_string: PG_URL, tables: ['a', { name: 'a', schema: 'x' }] },
        at,
      ),
    ).toThrow('skippr.yml: data_sources.db.Postgres.tables.1: table a is listed twice')
    expect(() =>
      parseConnectorConfig(definition, { connection_string: PG_URL, tables: ['a'], mod: 'x' }, at),
    ).toThrow('unknown key mod')
  })
})
