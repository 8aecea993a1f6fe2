/**
 * Copying records while setting aside the ones the server refuses. Each COPY runs under a
 * savepoint (savepoint.ts); when one fails, the line number in the error's CONTEXT
 * (`COPY <table>, line N…`) points at the record, the records before it are copied again, and the
 * record is then tried alone: only a record that fails alone, after every record before it was
 * kept, is refused. So a line number read wrongly costs an attempt, never a good row, and a
 * failure without one is narrowed by halves. The records kept stay in the transaction, in order,
 * so a later record is refused exactly when the same copy without the refused ones refuses it.
 *
 * PostgreSQL 15 counts lines as it reads them: one per record, plus every newline inside a quoted
 * field, except in the first record of a COPY (the line ending is not known yet when it is read).
 * `lineOfRecord` follows that (checked in the sink's tests); `embeddedNewlines` says what to count.
 *
 * Every record is sent at most a few times: after a refusal, the next COPY holds about twice as many
 * records as came before it since the last refusal, and it doubles with each COPY that succeeds.
 */
import type pg from 'pg'
import { copy } from './load.js'
import { tryKeeping } from './savepoint.js'

/** Records to copy: the bytes of any run of them, and the newlines inside each. */
export interface CopyRecords {
  readonly count: number
  /** The COPY data of records [from, to), each with its line ending. */
  data(from: number, to: number): Uint8Array
  /** Newlines inside record `record`'s quoted fields. */
  embeddedNewlines(record: number): number
}

/** A record the server refused, with its error. */
export interface RecordRefusal {
  readonly record: number
  readonly error: unknown
}

/** After a refusal, a COPY holds at least this many records (when as many remain). */
const MIN_RECORDS = 64

/**
 * Copies every record with `sql` (a `COPY … FROM STDIN` into `relation`, as its CONTEXT names it)
 * except those the server refuses, which are returned in order.
 */
export async function copyRefusing(
  client: pg.ClientBase,
  sql: string,
  relation: string,
  records: CopyRecords,
): Promise<RecordRefusal[]> {
  const refusals: RecordRefusal[] = []
  let from = 0
  let size = records.count
  let afterRefusal = 0
  /** The record a line number pointed at, to be tried alone once the records before it are kept. */
  let suspect: number | undefined
  while (from < records.count) {
    const to = suspect === from ? from + 1 : Math.min(records.count, from + size, suspect ?? records.count)
    const refusal = await tryKeeping(client, () => copy(client, sql, records.data(from, to)))
    if (refusal === undefined) {
      from = to
      size *= 2
    } else if (to - from === 1) {
      refusals.push({ record: from, error: refusal })
      size = Math.max(MIN_RECORDS, 2 * (from - afterRefusal))
      from += 1
      afterRefusal = from
      suspect = undefined
    } else {
      const line = lineInContext(refusal, relation)
      suspect = line === undefined ? undefined : recordAtLine(records, from, to, line)
      // Without a line to go by, halve the attempt.
      if (suspect === undefined) size = Math.ceil((to - from) / 2)
    }
  }
  return refusals
}

/** The line number in `COPY <relation>, line N…` of the error's CONTEXT. */
export function lineInContext(error: unknown, relation: string): number | undefined {
  const where = (error as { where?: unknown }).where
  if (typeof where !== 'string') return undefined
  const prefix = `COPY ${relation}, `
  // Other contexts (a trigger's) may stand before it, one a line.
  const context = where.split('\n').find((line) => line.startsWith(prefix))
  const digits = context?.slice(prefix.length).match(/\d+/)
  return digits ? Number(digits[0]) : undefined
}

/** The record of [from, to) holding line `line` of a COPY of them, as PostgreSQL 15 counts lines. */
export function recordAtLine(
  records: CopyRecords,
  from: number,
  to: number,
  line: number,
): number | undefined {
  let last = 0
  for (let record = from; record < to; record++) {
    last += 1 + (record === from ? 0 : records.embeddedNewlines(record))
    if (last >= line) return record
  }
  return undefined
}
