/**
 * Values read by the Postgres source and landed by the real sinks, read back from each destination:
 * the source's text form is only right when both PostgreSQL and DuckDB hold the value the table
 * held. Here, where the connectors are composed, since no connector imports another.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { SinkBatch, SourceChunk, WriteOutcome } from '@skippr/connector-api'
import { parseConnectorConfig, silentLogger } from '@skippr/connector-api'
import { DuckdbSink, ident } from '@skippr/sink-duckdb'
import { PostgresSink } from '@skippr/sink-postgres'
import { source as definition, PostgresSource } from '@skippr/source-postgres'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PG_URL, pgSchemaPerTest } from './support/file-sync.js'

const { name: schemaName } = pgSchemaPerTest('skippr_pg_source')
/** A session on the test's schema: its tables are the source's. */
let db: { readonly client: pg.Client; readonly schema: string; sql(text: string): Promise<pg.QueryResult> }
beforeEach(async () => {
  const schema = schemaName()
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  await client.query(`CREATE SCHEMA "${schema}"`)
  await client.query(`SET search_path TO "${schema}"`)
  db = { client, schema, sql: (text) => client.query(text) }
})
afterEach(async () => {
  await db.client.end()
})

async function readTable(table: string): Promise<SourceChunk[]> {
  const config = parseConnectorConfig(
    definition,
    { connection_string: PG_URL, tables: [{ name: table, schema: db.schema }] },
    { file: 'skippr.yml', path: 'data_sources.db.Postgres' },
  )
  const source = new PostgresSource(config, silentLogger)
  const chunks: SourceChunk[] = []
  for await (const chunk of source.read(undefined, { signal: new AbortController().signal, follow: false }))
    chunks.push(chunk)
  await source.close()
  return chunks
}

function batches(chunks: readonly SourceChunk[]): SinkBatch[] {
  return chunks.map((chunk, i) => {
    if (!chunk.schema) throw new Error('a Postgres chunk always carries its schema')
    return {
      id: { pipeline: 'p', epoch: 'e1', seq: BigInt(i + 1) },
      fence: 1n,
      parts: [{ ...chunk, schemaVersion: 1, schema: chunk.schema }],
    }
  })
}

interface Destination {
  /** Writes each chunk as a batch of its own; the outcome of each write. */
  land(chunks: readonly SourceChunk[]): Promise<WriteOutcome[]>
  /** The table's rows in key order, each column as the destination's own text. */
  rows(table: string, columns: readonly string[]): Promise<(string | null)[][]>
  remove(): Promise<void>
}

async function landAll(
  sink: PostgresSink | DuckdbSink,
  chunks: readonly SourceChunk[],
): Promise<WriteOutcome[]> {
  const outcomes: WriteOutcome[] = []
  try {
    for (const batch of batches(chunks)) {
      for (const part of batch.parts) await sink.prepare(part.schema)
      outcomes.push(await sink.write(batch))
    }
  } finally {
    await sink.close()
  }
  return outcomes
}

async function postgresDestination(): Promise<Destination> {
  const schema = `skippr_sink_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: PG_URL, options: '-c TimeZone=UTC' })
  await client.connect()
  return {
    land: (chunks) => landAll(new PostgresSink({ connection_string: PG_URL, schema }, silentLogger), chunks),
    async rows(table, columns) {
      const list = columns.map((c) => `${pg.escapeIdentifier(c)}::text`).join(', ')
      const result = await client.query<(string | null)[]>({
        text: `SELECT ${list} FROM ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)} ORDER BY 1`,
        rowMode: 'array',
      })
      return result.rows
    },
    async remove() {
      await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
      await client.end()
    },
  }
}

async function duckdbDestination(): Promise<Destination> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-source-pg-'))
  const file = path.join(dir, 'warehouse.duckdb')
  return {
    land: (chunks) =>
      landAll(
        new DuckdbSink({ path: 'warehouse.duckdb', schema: 'main' }, { configDir: dir, dataDir: 'data' }),
        chunks,
      ),
    async rows(table, columns) {
      const instance = await DuckDBInstance.create(file)
      const conn = await instance.connect()
      try {
        await conn.run("SET TimeZone = 'UTC'")
        const list = columns.map((c) => `${ident(c)}::VARCHAR`).join(', ')
        const reader = await conn.runAndReadAll(`SELECT ${list} FROM main.${ident(table)} ORDER BY 1`)
        return reader.getRowsJS() as (string | null)[][]
      } finally {
        conn.closeSync()
        instance.closeSync()
      }
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}

/** Lands `table` in a fresh destination and reads `columns` back. */
async function landed(
  open: () => Promise<Destination>,
  table: string,
  columns: readonly string[],
): Promise<{ outcomes: WriteOutcome[]; rows: (string | null)[][] }> {
  const destination = await open()
  try {
    const outcomes = await destination.land(await readTable(table))
    const failed = outcomes.find((o) => o.status !== 'landed')
    return { outcomes, rows: failed ? [] : await destination.rows(table, columns) }
  } finally {
    await destination.remove()
  }
}

const MOMENT_COLUMNS = ['id', 'at', 'local', 'day']

async function createMoments(): Promise<void> {
  await db.sql('CREATE TABLE moments (id int PRIMARY KEY, at timestamptz, local timestamp, day date)')
  await db.sql(`INSERT INTO moments VALUES
    (1, 'infinity', 'infinity', 'infinity'),
    (2, '-infinity', '-infinity', '-infinity'),
    (3, '0044-03-15 10:00:00.123456+00 BC', '0044-03-15 10:00:00.123456 BC', '0044-03-15 BC'),
    (4, '0001-12-31 23:59:59.999999+00 BC', '0001-12-31 23:59:59.999999 BC', '0001-12-31 BC'),
    (5, '4713-11-24 00:00:00+00 BC', '4713-11-24 00:00:00 BC', '4713-11-24 BC'),
    (6, '0001-01-01 00:00:00+00', '0001-01-01 00:00:00', '0001-01-01'),
    (7, '12345-06-07 08:09:10.5+00', '12345-06-07 08:09:10.5', '12345-06-07'),
    (8, '2024-05-01 12:30:00.000001+02', '2024-05-01 12:30:00.000001', '2024-05-01'),
    (9, NULL, NULL, NULL)`)
}

describe('dates and timestamps land exactly', () => {
  it('in PostgreSQL: infinity, BC and years past 9999 as the source table holds them', async () => {
    await createMoments()
    await db.sql('SET TimeZone = UTC')
    // `timestamp` lands as timestamptz: the same wall time, at UTC.
    const { rows: source } = await db.client.query<(string | null)[]>({
      text: `SELECT id::text, at::text, (local AT TIME ZONE 'UTC')::text, day::text FROM moments ORDER BY id`,
      rowMode: 'array',
    })
    expect(source).toHaveLength(9)
    const { outcomes, rows } = await landed(postgresDestination, 'moments', MOMENT_COLUMNS)
    expect(outcomes.map((o) => o.status)).toEqual(['landed'])
    expect(rows).toEqual(source)
  })

  it('in DuckDB: infinity, BC and years past 9999 as the source table holds them', async () => {
    await createMoments()
    const { outcomes, rows } = await landed(duckdbDestination, 'moments', MOMENT_COLUMNS)
    expect(outcomes.map((o) => o.status)).toEqual(['landed'])
    expect(rows).toEqual([
      ['1', 'infinity', 'infinity', 'infinity'],
      ['2', '-infinity', '-infinity', '-infinity'],
      ['3', '0044-03-15 (BC) 10:00:00.123456+00', '0044-03-15 (BC) 10:00:00.123456+00', '0044-03-15 (BC)'],
      ['4', '0001-12-31 (BC) 23:59:59.999999+00', '0001-12-31 (BC) 23:59:59.999999+00', '0001-12-31 (BC)'],
      ['5', '4713-11-24 (BC) 00:00:00+00', '4713-11-24 (BC) 00:00:00+00', '4713-11-24 (BC)'],
      ['6', '0001-01-01 00:00:00+00', '0001-01-01 00:00:00+00', '0001-01-01'],
      ['7', '12345-06-07 08:09:10.5+00', '12345-06-07 08:09:10.5+00', '12345-06-07'],
      ['8', '2024-05-01 10:30:00.000001+00', '2024-05-01 12:30:00.000001+00', '2024-05-01'],
      ['9', null, null, null],
    ])
  })
})

describe('a value the destination cannot hold', () => {
  it('is refused by DuckDB, naming the table, the column and the value; PostgreSQL holds it', async () => {
    // DuckDB's TIMESTAMPTZ ends in 294247 AD, PostgreSQL's timestamp in 294276 AD.
    await db.sql('CREATE TABLE far (id int PRIMARY KEY, at timestamp)')
    await db.sql(`INSERT INTO far VALUES (1, '2024-05-01 00:00:00'), (2, '294270-01-01 00:00:00')`)
    const duck = await landed(duckdbDestination, 'far', ['id', 'at'])
    const [outcome] = duck.outcomes
    // The row is refused (it becomes a deadletter); the other lands.
    expect(outcome?.status === 'refused' ? outcome.rows.map((r) => [r.part, r.row]) : outcome).toEqual([
      [0, 1],
    ])
    const message = outcome?.status === 'refused' ? (outcome.rows[0]?.error ?? '') : ''
    expect(message).toContain('"main"."far"')
    expect(message).toContain('column "at"')
    expect(message).toContain('294270-01-01T00:00:00.000000Z')
    const postgres = await landed(postgresDestination, 'far', ['id', 'at'])
    expect(postgres.rows).toEqual([
      ['1', '2024-05-01 00:00:00+00'],
      ['2', '294270-01-01 00:00:00+00'],
    ])
  })
})
