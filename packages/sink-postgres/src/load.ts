/**
 * Loads one batch part inside the caller's transaction. Bodies go to the server as they are:
 *
 * - csv: `COPY … FROM STDIN (FORMAT csv)` straight from the body bytes; the contract's CSV (no
 *   header, NULL as an unquoted empty field, `""` for the empty string) is PostgreSQL's CSV.
 * - jsonl: each line is copied verbatim into a one-column temp table (a CSV dialect whose quote
 *   and delimiter are control bytes, which valid JSON text cannot contain), then one
 *   INSERT … SELECT with json_populate_record converts every line to the table's row type in C.
 *   No line is parsed in JavaScript.
 */
import { finished } from 'node:stream/promises'
import type { BatchPart, NamespaceSchema } from '@skippr/connector-api'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { qualifiedName } from './ddl.js'

/** Slices keep the server parsing while the rest of a large body is still on its way. */
const SLICE_BYTES = 1 << 20

const JSONL_TABLE = '_skippr_jsonl'

export type Part = BatchPart & { readonly schema: NamespaceSchema }

/** Loads `part` into `schema`.`part.namespace`; returns the rows the server reports. */
export async function loadPart(client: pg.ClientBase, schema: string, part: Part): Promise<number> {
  if (part.body.length === 0) return 0
  const table = qualifiedName(schema, part.namespace)
  const columns = part.schema.fields.map((f) => pg.escapeIdentifier(f.name)).join(', ')
  if (part.format === 'csv')
    return copy(client, `COPY ${table} (${columns}) FROM STDIN WITH (FORMAT csv)`, part.body)
  await ensureJsonlTable(client)
  await copy(
    client,
    `COPY ${JSONL_TABLE} (line) FROM STDIN WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')`,
    part.body,
  )
  const fields = part.schema.fields.map((f) => `r.${pg.escapeIdentifier(f.name)}`).join(', ')
  // Emptying the staging table in the same statement keeps the next jsonl part of this batch apart.
  const inserted = await client.query(
    `WITH staged AS (DELETE FROM ${JSONL_TABLE} RETURNING line)
     INSERT INTO ${table} (${columns})
     SELECT ${fields} FROM staged j, json_populate_record(NULL::${table}, j.line::json) r
      WHERE j.line IS NOT NULL`,
  )
  return inserted.rowCount ?? 0
}

async function copy(client: pg.ClientBase, sql: string, body: Uint8Array): Promise<number> {
  const stream = client.query(copyFrom(sql))
  for (let at = 0; at < body.length; at += SLICE_BYTES)
    stream.write(Buffer.from(body.buffer, body.byteOffset + at, Math.min(SLICE_BYTES, body.length - at)))
  stream.end()
  await finished(stream)
  return stream.rowCount
}

/** Session-scoped and emptied at every commit, so it is created once per connection. */
const withJsonlTable = new WeakSet<pg.ClientBase>()

async function ensureJsonlTable(client: pg.ClientBase): Promise<void> {
  if (withJsonlTable.has(client)) return
  // Inside the write's transaction, so a rollback would undo it: forget it then (see forgetJsonlTable).
  await client.query(`CREATE TEMP TABLE IF NOT EXISTS ${JSONL_TABLE} (line text) ON COMMIT DELETE ROWS`)
  withJsonlTable.add(client)
}

/** After a rollback the temp table may be gone with it. */
export function forgetJsonlTable(client: pg.ClientBase): void {
  withJsonlTable.delete(client)
}
