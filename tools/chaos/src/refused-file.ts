/**
 * The `--refused` chaos source on disk: the CSV file the `File` source reads, its skippr.yml
 * entry, and the PostgreSQL table whose CHECK refuses some rows. The file only ever grows by whole
 * lines (header first), as an append-only log does, so a resumed sync reads on from its offset.
 */
import { appendFile } from 'node:fs/promises'
import path from 'node:path'
import pg from 'pg'
import type { Destination } from './destination.js'
import { CSV_HEADER, csvLine, FILE_FIELDS, fileRows, REFUSED_NOTE, type RowPlan } from './refused-rows.js'

/** The file, beside skippr.yml: `source_uri` of its deadletters, and the namespace `rentals`. */
export const FILE_NAME = 'rentals.csv'

/** Rows generated and appended at once: bounded memory whatever the file's size. */
const APPEND_ROWS = 10_000

/** The `File` entry of data_sources: a configured schema, so the table's types are known in advance. */
export function fileSourceEntry(chunkBytes: number): Record<string, unknown> {
  return {
    File: {
      path: FILE_NAME,
      format: 'csv',
      schema: FILE_FIELDS.map(({ name, type }) => ({ name, type })),
      chunk_bytes: chunkBytes,
    },
  }
}

/** Appends rows [from, to) of the plan to the file in `workDir`, the header first when `from` is 0. */
export async function appendFileRows(
  workDir: string,
  plan: RowPlan,
  from: number,
  to: number,
): Promise<void> {
  const file = path.join(workDir, FILE_NAME)
  if (from === 0) await appendFile(file, CSV_HEADER)
  for (let at = from; at < to; at += APPEND_ROWS) {
    const lines = fileRows(plan, at, Math.min(APPEND_ROWS, to - at)).flatMap((row) => [
      csvLine(row),
      Buffer.from('\n'),
    ])
    await appendFile(file, Buffer.concat(lines))
  }
}

/** The schema's column types as the PostgreSQL sink creates them (sink-postgres's ddl.ts). */
const PG_TYPES: Record<string, string> = {
  string: 'text',
  int: 'integer',
  long: 'bigint',
  double: 'double precision',
  timestamp: 'timestamptz',
}

/**
 * Creates the data table before the first run, with the types the sink would give it (so that it
 * neither adds nor alters a column) and a CHECK on `note`: rows holding REFUSED_NOTE are the
 * destination's to refuse.
 */
export async function createRefusingTable(destination: Destination): Promise<void> {
  const columns = FILE_FIELDS.map((f) => `${pg.escapeIdentifier(f.name)} ${PG_TYPES[f.type]}`)
  await destination.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(destination.schema)}`)
  await destination.query(
    `CREATE TABLE ${destination.table} (${columns.join(', ')}, CHECK (note <> '${REFUSED_NOTE}'))`,
  )
}
