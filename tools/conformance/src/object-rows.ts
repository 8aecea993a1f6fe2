/**
 * Reading back what an object sink wrote, as a user downstream would: every object under a
 * namespace's key prefix, decompressed, its rows decoded (JSON lines, CSV with its header) or read
 * by DuckDB's `read_parquet` from a downloaded copy.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { DuckDBInstance } from '@duckdb/node-api'
import { safeName } from '@skippr/file-formats'
import type { ObjectStore } from '@skippr/object-sink'
import { decompress as zstdDecompress } from 'fzstd'
import { parseCsvWithHeader } from './csv.js'
import { decodeRows } from './decode.js'

/** Every row of every object of `namespace` (one per batch part), in key order. */
export async function objectRows(store: ObjectStore, namespace: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = []
  for (const key of await store.list(`${safeName(namespace)}/`))
    rows.push(...(await fileRows(key, await store.read(key))))
  return rows
}

/** The rows of one file, told apart by its name's extension (`.jsonl`, `.csv.gz`, `.parquet`, …). */
export async function fileRows(name: string, bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  if (name.endsWith('.parquet')) return parquetRows(bytes)
  const text = new TextDecoder().decode(decompressed(name, bytes))
  return /\.csv(\.|$)/.test(name) ? parseCsvWithHeader(text) : decodeRows(text, 'jsonl', [])
}

/** Decompressed by other code than the sinks' compressor (a pure-JS zstd decoder), so the two check each other. */
function decompressed(name: string, bytes: Uint8Array): Uint8Array {
  if (name.endsWith('.gz')) return gunzipSync(bytes)
  return name.endsWith('.zst') ? zstdDecompress(bytes) : bytes
}

async function parquetRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-parquet-'))
  const instance = await DuckDBInstance.create(':memory:')
  const connection = await instance.connect()
  try {
    const file = path.join(dir, 'part.parquet')
    await writeFile(file, bytes)
    const reader = await connection.runAndReadAll(
      `SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`,
    )
    return reader.getRowObjectsJS() as Record<string, unknown>[]
  } finally {
    connection.closeSync()
    instance.closeSync()
    await rm(dir, { recursive: true, force: true })
  }
}
