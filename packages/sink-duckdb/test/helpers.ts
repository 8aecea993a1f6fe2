import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { SinkHarness } from '@skippr/conformance'
import { DuckdbSink } from '../src/index.js'

/** Runs a query on the file through the process's shared instance, as a user's reader would. */
export async function query(file: string, sql: string, values: (string | bigint)[] = []) {
  const instance = await DuckDBInstance.fromCache(file)
  const conn = await instance.connect()
  try {
    return (await conn.runAndReadAll(sql, values)).getRowObjectsJS()
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}

export async function readTable(file: string, schema: string, table: string) {
  const found = await query(
    file,
    'SELECT 1 FROM duckdb_tables() WHERE schema_name = $1 AND table_name = $2',
    [schema, table],
  )
  if (found.length === 0) return []
  const ident = (name: string) => `"${name.replaceAll('"', '""')}"`
  return query(file, `SELECT * FROM ${ident(schema)}.${ident(table)}`)
}

export interface TempWarehouse {
  dir: string
  file: string
  sink(schema?: string): DuckdbSink
}

export async function tempWarehouse(): Promise<TempWarehouse> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-duckdb-'))
  const file = path.join(dir, 'warehouse.duckdb')
  return {
    dir,
    file,
    sink: (schema = 'main') =>
      new DuckdbSink(
        { path: 'warehouse.duckdb', schema },
        { configDir: dir, dataDir: path.join(dir, 'data') },
      ),
  }
}

export function duckdbHarness(schema: string): SinkHarness {
  let warehouse: TempWarehouse | undefined
  return {
    name: `duckdb (schema ${schema})`,
    setup: async () => {
      warehouse = await tempWarehouse()
    },
    createSink: async () => warehouse!.sink(schema),
    readRows: (namespace) => readTable(warehouse!.file, schema, namespace),
    cleanup: async () => rm(warehouse!.dir, { recursive: true, force: true }),
  }
}
