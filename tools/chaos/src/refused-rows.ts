/**
 * The rows of the `--refused` chaos source: bikehire rentals (source-sample's bikehire.ts) with a
 * `note` column, as CSV lines. Row `i` (rental_id `i + 1`, line `i + 2` of the file, after the
 * header) is a pure function of (data seed, i), so the file can grow by appending and the check
 * can rebuild any line without reading the file.
 *
 * A share of the rows, chosen by a hash of (seed, rental_id) and so spread through the file, is
 * bad in one way (`BadKind`): the File source sets aside a NUL and bytes that are not UTF-8
 * (source-file's README, "Records set aside"); the destination refuses a `note` the table's CHECK
 * forbids (PostgreSQL only: the harness creates that table) and a start time after every
 * timestamp type's end (DuckDB's TIMESTAMPTZ ends in 294247 AD, PostgreSQL's in 294276 AD). Bad
 * bytes go in `note` or `start_time` only, never in `rental_id`, so every record names its row.
 */
import type { Field } from '@skippr/connector-api'
import { bikehireRows, bikehireSchema, mix32, type Rental } from '@skippr/source-sample'
import type { SinkKind } from './destination.js'

export type BadKind = 'not-utf8' | 'nul' | 'check' | 'far-future'

/** The kinds the File source sets aside; the others reach the destination, which refuses them. */
export const SOURCE_KINDS: readonly BadKind[] = ['not-utf8', 'nul']

/** The sinks with a deadletter table beside the data, where a `--refused` run can check both. */
export const REFUSED_SINKS = ['duckdb', 'postgres'] as const satisfies readonly SinkKind[]
export type RefusedSinkKind = (typeof REFUSED_SINKS)[number]

export function isRefusedSink(sink: SinkKind): sink is RefusedSinkKind {
  return (REFUSED_SINKS as readonly SinkKind[]).includes(sink)
}

/** What each destination refuses: only PostgreSQL's table gets the CHECK. */
export const DESTINATION_KINDS: Readonly<Record<RefusedSinkKind, readonly BadKind[]>> = {
  postgres: ['check', 'far-future'],
  duckdb: ['far-future'],
}

/** The note a CHECK constraint refuses. */
export const REFUSED_NOTE = 'refuse-me'
/** Past both sinks' timestamp range; the File source leaves timestamps to the sinks (csv-values.ts). */
export const FAR_FUTURE = '300000-01-01T00:00:00Z'

/** The file's columns, as the File source's `schema`: the bikehire fields, then `note`. */
export const FILE_FIELDS: readonly Field[] = [
  ...bikehireSchema.fields.map(({ name, type }) => ({ name, type })),
  { name: 'note', type: 'string' },
]

export const CSV_HEADER = `${FILE_FIELDS.map((f) => f.name).join(',')}\n`

/** Which rows are bad, and how. */
export interface RowPlan {
  readonly seed: number
  /** The share of rows that are bad, in [0, 1). */
  readonly fraction: number
  /** The kinds a bad row draws from, equally often. */
  readonly kinds: readonly BadKind[]
}

export function rowPlan(seed: number, fraction: number, sink: RefusedSinkKind): RowPlan {
  return { seed, fraction, kinds: [...SOURCE_KINDS, ...DESTINATION_KINDS[sink]] }
}

/** How row `rentalId` is bad, or undefined for a good row. */
export function badKindOf(plan: RowPlan, rentalId: number): BadKind | undefined {
  const u = mix32(mix32(plan.seed ^ 0x5bd1e995) ^ rentalId) / 2 ** 32
  if (u >= plan.fraction) return undefined
  return plan.kinds[Math.min(plan.kinds.length - 1, Math.floor((u / plan.fraction) * plan.kinds.length))]
}

/** A row of the file, as values; `note` as a reader of the line sees it. */
export interface FileRow extends Rental {
  note: string
  readonly kind: BadKind | undefined
}

/** Rows [from, from + count) of the file, with each bad row's bad value in place. */
export function fileRows(plan: RowPlan, from: number, count: number): FileRow[] {
  return bikehireRows(plan.seed, from, count).map((rental) =>
    withKind(rental, badKindOf(plan, rental.rental_id)),
  )
}

function withKind(rental: Rental, kind: BadKind | undefined): FileRow {
  const row: FileRow = { ...rental, note: `ok ${rental.rental_id}`, kind }
  if (kind === 'not-utf8') row.note = 'bad \uFFFD utf8'
  if (kind === 'nul') row.note = 'bad \0 nul'
  if (kind === 'check') row.note = REFUSED_NOTE
  if (kind === 'far-future') row.start_time = FAR_FUTURE
  return row
}

/** A byte no UTF-8 text holds. */
const NOT_UTF8 = Buffer.from([0xff])

/** The row's CSV line, without its newline: no field needs quoting, and `note` comes last. */
export function csvLine(row: FileRow): Buffer {
  const fields = FILE_FIELDS.slice(0, -1).map((f) => String(row[f.name as keyof Rental]))
  const note =
    row.kind === 'not-utf8'
      ? Buffer.concat([Buffer.from('bad '), NOT_UTF8, Buffer.from(' utf8')])
      : Buffer.from(row.note)
  return Buffer.concat([Buffer.from(`${fields.join(',')},`), note])
}

/**
 * A deadletter's `record` for the line: its text, with bytes that are not UTF-8 and NUL as
 * U+FFFD (connector-api's deadletter.ts `RefusedRecord.record`).
 */
export function expectedRecord(line: Buffer): string {
  return line.toString('utf8').replaceAll('\0', '\uFFFD')
}
