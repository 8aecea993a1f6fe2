/**
 * Loads one batch part inside the caller's transaction. Bodies go to the server as they are:
 *
 * - csv: `COPY … FROM STDIN (FORMAT csv)` straight from the body bytes; the contract's CSV (no
 *   header, NULL as an unquoted empty field, `""` for the empty string) is PostgreSQL's CSV.
 * - jsonl: each line is copied verbatim into a one-column temp table (a CSV dialect whose quote
 *   and delimiter are control bytes, which valid JSON text cannot contain), then one
 *   INSERT … SELECT with json_populate_record converts every line to the table's row type in C.
 *   No line is parsed in JavaScript.
 *
 * In both, a line holding only `\.` would end the COPY early: its field is quoted first (see
 * end-of-copy.ts), so in csv it lands as the text `\.` and in jsonl it is refused as invalid JSON.
 */
import { once } from 'node:events'
import { finished } from 'node:stream/promises'
import type { BatchPart, NamespaceSchema } from '@skippr/connector-api'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { qualifiedName } from './ddl.js'
import { quoteEndOfCopyLines } from './end-of-copy.js'

/** Slices keep the server parsing while the rest of a large body is still on its way. */
const SLICE_BYTES = 1 << 20

const JSONL_TABLE = '_skippr_jsonl'

export const CSV_QUOTE = 0x22
/** The quote byte of the dialect that copies JSON lines verbatim (`QUOTE E'\\x01'` below). */
export const JSONL_QUOTE = 0x01

export type Part = BatchPart & { readonly schema: NamespaceSchema }

/** Loads `part` into `schema`.`part.namespace`; returns the rows the server reports. */
export async function loadPart(client: pg.ClientBase, schema: string, part: Part): Promise<number> {
  if (part.body.length === 0) return 0
  if (part.format === 'csv')
    return copy(client, copyCsv(schema, part), quoteEndOfCopyLines(part.body, CSV_QUOTE))
  await ensureJsonlTable(client)
  await copy(
    client,
    `COPY ${JSONL_TABLE} (line) FROM STDIN WITH (${JSONL_DIALECT})`,
    quoteEndOfCopyLines(part.body, JSONL_QUOTE),
  )
  // Emptying the staging table in the same statement keeps the next jsonl part of this batch apart.
  // A blank line (spaces, tabs, a CR; an empty one arrives as NULL) is no record, as `recordRanges`
  // counts them; the first character decides for almost every line, at no measurable cost.
  const inserted = await client.query(
    `WITH staged AS (DELETE FROM ${JSONL_TABLE} RETURNING line)
     ${insertJsonLines(schema, part, 'staged')}
      WHERE j.line IS NOT NULL AND (ascii(j.line) NOT IN (32, 9, 13) OR btrim(j.line, E' \t\r') <> '')`,
  )
  return inserted.rowCount ?? 0
}

/** The COPY of a csv part's records into its table. */
export function copyCsv(schema: string, part: Part): string {
  const columns = part.schema.fields.map((f) => pg.escapeIdentifier(f.name)).join(', ')
  return `COPY ${qualifiedName(schema, part.namespace)} (${columns}) FROM STDIN WITH (FORMAT csv)`
}

/** The COPY options that take each line verbatim as one text field: quote 0x01, delimiter 0x02. */
export const JSONL_DIALECT = "FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02'"

/**
 * `INSERT INTO <table> … SELECT … FROM <staged> j, json_populate_record(…) r`: the rows of the
 * JSON text in `j.line`, converted by the server to the table's row type. A WHERE may follow.
 */
export function insertJsonLines(schema: string, part: Part, staged: string): string {
  const table = qualifiedName(schema, part.namespace)
  const columns = part.schema.fields.map((f) => pg.escapeIdentifier(f.name)).join(', ')
  const fields = part.schema.fields.map((f) => `r.${pg.escapeIdentifier(f.name)}`).join(', ')
  return `INSERT INTO ${table} (${columns})
     SELECT ${fields} FROM ${staged} j, json_populate_record(NULL::${table}, j.line::json) r`
}

/** Runs `sql` (a `COPY … FROM STDIN`) with `body` as its data; returns the rows the server reports. */
export async function copy(client: pg.ClientBase, sql: string, body: Uint8Array): Promise<number> {
  const stream = client.query(copyFrom(sql))
  const done = finished(stream)
  let refused = false
  stream.once('error', () => {
    refused = true
  })
  // One slice at a time, and none after the server refused the COPY: pg-copy-streams writes its
  // queued slices when the socket drains, and once the COPY has failed that throws outside any
  // promise (its connection is gone), ending the process. A refused row early in a large body did.
  for (let at = 0; at < body.length && !refused; at += SLICE_BYTES) {
    const slice = Buffer.from(body.buffer, body.byteOffset + at, Math.min(SLICE_BYTES, body.length - at))
    // A failure while waiting is the stream's error, which `done` rejects with.
    if (!stream.write(slice)) await once(stream, 'drain').catch(() => {})
  }
  if (!refused) stream.end()
  await done
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
