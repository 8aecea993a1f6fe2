/**
 * Naming every row of a batch the server refuses for its data, after a part failed with SQLSTATE
 * class 22 or 23. In a transaction of its own, always rolled back, the parts are loaded again in
 * order, each record the server refuses set aside (copy-refusals.ts for csv, refused-jsonl.ts for
 * JSON lines) and every other kept: a record refused for what came before it (a duplicate key)
 * is then refused exactly as the batch without the refused rows would refuse it. Runs only after a
 * failure, so the clean path costs nothing more.
 */
import type { RefusedRow } from '@skippr/connector-api'
import { recordRanges } from '@skippr/connector-api'
import type pg from 'pg'
import { type CopyRecords, copyRefusing } from './copy-refusals.js'
import { qualifiedName } from './ddl.js'
import { quoteEndOfCopyLines } from './end-of-copy.js'
import { CSV_QUOTE, copyCsv, type Part } from './load.js'
import { refusedRow } from './refusal-reason.js'
import { insertRefusingJsonl } from './refused-jsonl.js'

/** Every row of `parts` the server refuses, in order of part and row; nothing is written. */
export async function findRefusedRows(
  client: pg.ClientBase,
  schema: string,
  parts: readonly Part[],
): Promise<RefusedRow[]> {
  await client.query('BEGIN')
  try {
    const rows: RefusedRow[] = []
    for (const [index, part] of parts.entries())
      rows.push(...(await refusedRowsOf(client, schema, part, index)))
    return rows
  } finally {
    await client.query('ROLLBACK')
  }
}

async function refusedRowsOf(
  client: pg.ClientBase,
  schema: string,
  part: Part,
  index: number,
): Promise<RefusedRow[]> {
  if (part.body.length === 0) return []
  const table = qualifiedName(schema, part.namespace)
  if (part.format === 'jsonl') {
    const refusals = await insertRefusingJsonl(client, schema, part)
    return refusals.map((r) => refusedRow(index, r.record, table, r.error, r.column))
  }
  const refusals = await copyRefusing(client, copyCsv(schema, part), part.namespace, csvRecords(part.body))
  return refusals.map((r) => refusedRow(index, r.record, table, r.error))
}

/** The records of a csv body as `recordRanges` counts them, each sent with its `\.` lines quoted. */
export function csvRecords(body: Uint8Array): CopyRecords {
  const ranges = recordRanges(body, 'csv')
  const starts = [...ranges.map(([start]) => start), body.length]
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.length)
  return {
    count: ranges.length,
    data: (from, to) => quoteEndOfCopyLines(bytes.subarray(starts[from], starts[to]), CSV_QUOTE),
    embeddedNewlines(record) {
      const [start, end] = ranges[record] as [number, number]
      let newlines = 0
      for (let at = bytes.indexOf(0x0a, start); at !== -1 && at < end; at = bytes.indexOf(0x0a, at + 1))
        newlines++
      return newlines
    },
  }
}
